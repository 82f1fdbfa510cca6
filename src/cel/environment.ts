import { Environment } from '@marcbachmann/cel-js';
import { registerDataFunctions } from './functions/data.ts';
import { registerNetworkFunctions } from './functions/network.ts';
import { registerRegexFunctions } from './functions/regex.ts';
import { registerStringFunctions } from './functions/strings.ts';

/**
 * The one CEL environment every Switchboard expression compiles against: authorization,
 * transformations, rate-limit descriptors, log/trace/metric attributes, MCP and model policies.
 * docs/cel.md documents each variable's fields and types.
 */
export const VARIABLES = {
  request: 'The HTTP request: method, path, uri, host, scheme, version, headers, query, body (bytes), startTime.',
  source: 'The downstream connection: address, port, and for mutual TLS identity, subjectAltNames, subject, issuer.',
  jwt: 'Claims of the verified JWT; an empty map without one.',
  apiKey: 'The matched API key: name, metadata, and the metadata fields at top level.',
  basicAuth: 'The authenticated basic-auth user: user.',
  llm: 'The LLM exchange: requestModel, responseModel, provider, inputTokens, outputTokens, totalTokens, streaming.',
  mcp: 'The MCP call: method, target, and tool / prompt / resource with name and target.',
  a2a: 'The A2A call (a2a backends, JSON-RPC binding): method, taskId, contextId, skill.',
  response: 'The response: code, headers, body (bytes).',
  backend: 'The selected backend: name, namespace, type, protocol.',
  route: 'The matched route: name, namespace, rule.',
  gateway: 'The gateway and listener: name, namespace, listener.',
  extauthz: 'Metadata returned by the external authorization service.',
  extproc: 'Metadata returned by the external processor.',
} as const;

export type VariableName = keyof typeof VARIABLES;
export const VARIABLE_NAMES = Object.keys(VARIABLES) as VariableName[];

function createEnvironment(): Environment {
  const env = new Environment({
    // Typos in variable names are compile errors, not requests that fail later.
    unlistedVariablesAreDyn: false,
    // `{"a": 1, "b": "x"}` is ordinary in transformations that build JSON bodies.
    homogeneousAggregateLiterals: false,
    // `request.headers[?"x-user"].orValue("anonymous")`
    enableOptionalTypes: true,
    limits: { maxAstNodes: 10_000, maxDepth: 100 },
  });
  for (const name of VARIABLE_NAMES) env.registerVariable(name, 'map', { description: VARIABLES[name] });
  registerRegexFunctions(env);
  registerNetworkFunctions(env);
  registerDataFunctions(env);
  registerStringFunctions(env);
  return env;
}

/** Built once at module load; environments are expensive to create and immutable once in use. */
export const environment: Environment = createEnvironment();
