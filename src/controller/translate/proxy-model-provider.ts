/**
 * A ProxyModel's provider settings (`provider`, `providerC`, `providerF`, `providerG`, `custom`,
 * `baseURL`) lowered to the LLMProvider the `ai` backend machinery already serves (src/ir/ai.ts),
 * so a model is reached through the same planner, credentials and failover as a ProxyBackend's
 * provider. Pure: every mistake is a Problem naming the field.
 *
 * Vendors (VENDORS.md, "ProxyModel vendors"): VendorA/C/D/E/F/G are providerA/C/D/E/F/G; the
 * thirteen further vendors speak OpenAI's API and become providerA at the vendor's public base
 * URL (Ollama runs on the user's own machine and has none: it needs `baseURL`); Custom is `custom`.
 *
 * `baseURL` (SPEC.md: http or https, no query, fragment or user info; overrides the provider's
 * address and base path). The proxy infers TLS from the port (443 is TLS, any other plain,
 * src/proxy/llm/translate/providers/paths.ts), so an https URL on another port, or http on 443,
 * is refused rather than served with the wrong scheme. A base path is honoured where the provider
 * module has a path prefix (OpenAI-shaped and Anthropic); elsewhere it must be `/`.
 *
 * SSRF guard: a `baseURL` whose host is loopback, link-local, unspecified or a cloud metadata
 * address (an IP literal, `localhost`, or a well-known metadata name) is refused, unless the
 * provider is Custom on a `backendRef` (then the operator chose an in-cluster Service). The check
 * here is on what is written; a public name that resolves to such an address is refused by the
 * proxy when it connects (proxy-model.ts marks the provider `guardAddresses`; docs/security.md).
 */
import { BlockList, isIP } from 'node:net';
import type { LLMProvider } from '../../ir/ai.ts';
import { isDict, type Dict } from './read.ts';
import type { Problem } from './status/conditions.ts';

/**
 * Public OpenAI-compatible base URLs of the vendors SPEC.md names only by value (VENDORS.md), each
 * checked against the vendor's own documentation (the page is named; checked 2026-11):
 */
export const OPENAI_COMPATIBLE_BASE_URLS: Readonly<Record<string, string | undefined>> = {
  // https://docs.cohere.com/docs/compatibility-api ("Compatibility API", base_url)
  Cohere: 'https://api.cohere.ai/compatibility/v1',
  // Runs on the user's own machine: no public address.
  Ollama: undefined,
  // https://docs.baseten.co/quickstart (Model APIs with the OpenAI SDK)
  Baseten: 'https://inference.baseten.co/v1',
  // https://inference-docs.cerebras.ai (the API's address on its front page)
  Cerebras: 'https://api.cerebras.ai/v1',
  // https://deepinfra.com/docs/advanced/openai_api ("The api_base is …/v1/openai")
  DeepInfra: 'https://api.deepinfra.com/v1/openai',
  // https://api-docs.deepseek.com/ ("Your First API Call": base_url https://api.deepseek.com; /v1 is only an alias)
  DeepSeek: 'https://api.deepseek.com',
  // https://console.groq.com/docs/openai ("OpenAI Compatibility")
  Groq: 'https://api.groq.com/openai/v1',
  // https://huggingface.co/changelog/inference-providers-openai-compatible (Inference Providers router)
  HuggingFace: 'https://router.huggingface.co/v1',
  // https://docs.mistral.ai/api/ (server https://api.mistral.ai, paths under /v1; found only through
  // third-party pages quoting it, e.g. https://docs.tray.ai/connectors/artificial-intelligence/mistral-ai)
  Mistral: 'https://api.mistral.ai/v1',
  // https://openrouter.ai/docs/quickstart ("Using the OpenAI SDK")
  OpenRouter: 'https://openrouter.ai/api/v1',
  // https://docs.together.ai/docs/inference/openai-compatibility (the docs now use api.together.ai, not api.together.xyz)
  TogetherAI: 'https://api.together.ai/v1',
  // https://docs.x.ai/api/integrations ("OpenAI SDK")
  XAI: 'https://api.x.ai/v1',
  // https://docs.fireworks.ai/tools-sdks/openai-compatibility (found only through third-party pages quoting it,
  // e.g. https://docs.pipecat.ai/server/services/llm/fireworks, default base_url)
  Fireworks: 'https://api.fireworks.ai/inference/v1',
};

const DIRECT: Readonly<Record<string, 'providerA' | 'providerC' | 'providerD' | 'providerE' | 'providerF' | 'providerG'>> = {
  VendorA: 'providerA', VendorC: 'providerC', VendorD: 'providerD', VendorE: 'providerE', VendorF: 'providerF', VendorG: 'providerG',
};

/** Provider modules whose base path is configurable (`pathPrefix`, SPEC.md: providerA and providerD). */
const PREFIXED = new Set(['providerA', 'providerD']);

/** Addresses a model's baseURL must not name: loopback, link-local, unspecified, metadata. */
const FORBIDDEN = new BlockList();
FORBIDDEN.addSubnet('127.0.0.0', 8, 'ipv4');
FORBIDDEN.addSubnet('169.254.0.0', 16, 'ipv4');
FORBIDDEN.addSubnet('0.0.0.0', 8, 'ipv4');
// Alibaba Cloud's metadata service; the others sit in 169.254.0.0/16.
FORBIDDEN.addAddress('100.100.100.200', 'ipv4');
FORBIDDEN.addAddress('::1', 'ipv6');
FORBIDDEN.addAddress('::', 'ipv6');
FORBIDDEN.addSubnet('fe80::', 10, 'ipv6');
// AWS's IPv6 metadata address.
FORBIDDEN.addAddress('fd00:ec2::254', 'ipv6');
const FORBIDDEN_NAMES = new Set(['localhost', 'metadata', 'metadata.google.internal', 'metadata.goog', 'instance-data', 'instance-data.ec2.internal']);

/** Why `host` (a URL hostname, IPv6 without brackets) is refused, or undefined when it is allowed. */
export function forbiddenHost(host: string): string | undefined {
  const name = host.toLowerCase().replace(/\.$/, '');
  if (FORBIDDEN_NAMES.has(name) || name.endsWith('.localhost')) return `${host} is a local or metadata name`;
  const family = isIP(name);
  if (family === 0) return undefined;
  // BlockList also matches an IPv4-mapped IPv6 address (::ffff:127.0.0.1) against the IPv4 rules.
  const blocked = FORBIDDEN.check(name, family === 4 ? 'ipv4' : 'ipv6');
  return blocked ? `${host} is a loopback, link-local, unspecified or metadata address` : undefined;
}

export interface BaseUrlParts { readonly host: string; readonly port: number; readonly path: string }

/** SPEC.md's baseURL rules, checked again here (the schema's pattern is the first line). */
export function parseBaseUrl(text: string): BaseUrlParts | { readonly error: string } {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return { error: `"${text}" is not a URL` };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return { error: `"${text}": only http and https are allowed` };
  if (url.username !== '' || url.password !== '') return { error: `"${text}": user info is not allowed` };
  if (url.search !== '' || text.includes('?')) return { error: `"${text}": a query is not allowed` };
  if (url.hash !== '' || text.includes('#')) return { error: `"${text}": a fragment is not allowed` };
  const tls = url.protocol === 'https:';
  const port = url.port === '' ? (tls ? 443 : 80) : Number(url.port);
  if (tls !== (port === 443)) return { error: `"${text}": ${tls ? 'https on a port other than 443' : 'http on port 443'} is not supported yet (the proxy speaks TLS to port 443 only)` };
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  return { host, port, path: url.pathname.replace(/\/+$/, '') };
}

/** The LLMProvider a ProxyModel's spec stands for, or the problems that keep it from being served. */
export function lowerModelProvider(spec: Dict, path = 'spec'): { provider?: LLMProvider; problems: Problem[] } {
  const problems: Problem[] = [];
  const invalid = (field: string, message: string) => problems.push({ reason: 'Invalid', message: `${path}.${field}: ${message}` });
  const vendor = typeof spec.provider === 'string' ? spec.provider : undefined;
  if (!vendor) return { problems: [{ reason: 'Invalid', message: `${path}.provider: required (virtual models are not served yet)` }] };

  let token: string;
  let config: Dict = {};
  let baseURL = typeof spec.baseURL === 'string' ? spec.baseURL : undefined;
  const direct = DIRECT[vendor];
  if (direct) {
    token = direct;
    if (direct === 'providerC') {
      if (!isDict(spec.providerC)) invalid('providerC', 'required for VendorC');
      else config = pick(spec.providerC, ['resourceName', 'resourceType', 'apiVersion', 'projectName']);
    } else if (direct === 'providerF') {
      const f = isDict(spec.providerF) ? spec.providerF : {};
      if (typeof f.projectId !== 'string' || typeof f.region !== 'string') invalid('providerF', 'projectId and region are required for VendorF');
      else config = { projectId: f.projectId, region: f.region };
    } else if (direct === 'providerG' && isDict(spec.providerG)) {
      config = pick(spec.providerG, ['region', 'guardrail']);
    }
  } else if (vendor === 'Custom') {
    token = 'custom';
    if (!isDict(spec.custom)) invalid('custom', 'required for Custom (formats)');
    else config = pick(spec.custom, ['backendRef', 'formats']);
    if (!isDict(spec.custom) || (!isDict(spec.custom.backendRef) && baseURL === undefined)) invalid('baseURL', 'a Custom model needs custom.backendRef or baseURL');
  } else if (vendor in OPENAI_COMPATIBLE_BASE_URLS) {
    token = 'providerA';
    baseURL ??= OPENAI_COMPATIBLE_BASE_URLS[vendor];
    if (baseURL === undefined) invalid('baseURL', `required for ${vendor} (it has no public address)`);
  } else {
    return { problems: [{ reason: 'Invalid', message: `${path}.provider: unknown provider "${vendor}"` }] };
  }

  const provider: Record<string, unknown> = { [token]: config };
  if (baseURL !== undefined) {
    const parts = parseBaseUrl(baseURL);
    if ('error' in parts) invalid('baseURL', parts.error);
    else {
      const onBackendRef = token === 'custom' && isDict(config.backendRef);
      const refused = onBackendRef ? undefined : forbiddenHost(parts.host);
      if (refused) invalid('baseURL', `${refused} (only a Custom model on a backendRef may reach in-cluster or local addresses)`);
      if (PREFIXED.has(token)) provider.pathPrefix = parts.path;
      else if (parts.path !== '') invalid('baseURL', `a base path is not supported for provider ${vendor}; use a URL without a path`);
      // On a backendRef the Service is the address; the URL only contributes its (empty) path.
      if (!onBackendRef) {
        provider.host = parts.host;
        provider.port = parts.port;
      }
    }
  }
  return problems.length > 0 ? { problems } : { provider: provider as unknown as LLMProvider, problems };
}

function pick(from: Dict, keys: readonly string[]): Dict {
  const out: Dict = {};
  for (const k of keys) if (from[k] !== undefined) out[k] = from[k];
  return out;
}
