import { httpGateway } from '../support/manifests.ts';
/** The Gateway and route every LLM e2e test shares; tests add their ProxyBackends and Secrets. */
export function llmGatewayYaml(backends: readonly { name: string; prefix: string }[], extra: string): string {
  return `
${httpGateway()}---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: llm }
spec:
  parentRefs: [{ name: gw }]
  rules:
${backends.map((b) => `    - matches: [{ path: { type: PathPrefix, value: ${b.prefix} } }]
      backendRefs: [{ group: switchboard.dev, kind: ProxyBackend, name: ${b.name} }]`).join('\n')}
---
${extra}`;
}

/** The route types every test backend serves, by the SDKs' path suffixes. */
export const ROUTES = `{ /chat/completions: Completions, /messages: Messages, /messages/count_tokens: TokenCount, /responses: Responses, /embeddings: Embeddings, /models: Models }`;

/** The `keys` Secret that keyedAiBackend reads provider keys from. */
export function keysSecret(keys: Readonly<Record<string, string>>): string {
  return `apiVersion: v1
kind: Secret
metadata: { name: keys }
stringData: { ${Object.entries(keys).map(([k, v]) => `${k}: ${v}`).join(', ')} }
`;
}

/**
 * An `ai` ProxyBackend serving ROUTES, its provider (`provider` is the YAML of the provider member,
 * e.g. `providerD: {}`) at a local mock, its key from the `keys` Secret under `key`.
 */
export function keyedAiBackend(name: string, provider: string, at: { host: string; port: number }, key = name): string {
  return `apiVersion: switchboard.dev/v1alpha1
kind: ProxyBackend
metadata: { name: ${name} }
spec:
  ai:
    provider: { ${provider}, host: ${at.host}, port: ${at.port} }
  policies:
    auth: { secretRef: { name: keys, key: ${key} } }
    ai: { routes: ${ROUTES} }
`;
}
