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
