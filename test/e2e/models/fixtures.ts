/**
 * Shared manifests for the ProxyModel e2e tests (docs/models.md): the models route (an HTTPRoute
 * rule whose only backendRef is the ProxyModel backend `*`), a Service per fake vendor (its one
 * ready endpoint is the mock, which listens on loopback — a baseURL may not name it: SSRF guard)
 * and Custom models on those Services, answering OpenAI chat completions.
 */

export const MODELS_ROUTE = `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: models }
spec:
  parentRefs: [{ name: gw }]
  rules:
    - matches: [{ path: { type: PathPrefix, value: /v1 } }]
      backendRefs: [{ group: switchboard.dev, kind: ProxyModel, name: "*" }]
`;

export { vendorService } from '../../llm/mock-provider.ts';

/** A Custom ProxyModel on `service`; `extra` is more of its spec, indented two spaces. */
export function customModel(name: string, service: string, extra = ''): string {
  return `apiVersion: switchboard.dev/v1alpha1
kind: ProxyModel
metadata: { name: ${name} }
spec:
  parentRefs: [{ group: gateway.networking.k8s.io, kind: HTTPRoute, name: models }]
  provider: Custom
  custom: { backendRef: { name: ${service}, port: 8000 }, formats: [{ type: Completions }] }
${extra}`;
}

/** A virtual ProxyModel; `virtualModel` is its spec.virtualModel in YAML flow or block form, indented four spaces. */
export function virtualModel(name: string, virtual: string, extra = ''): string {
  return `apiVersion: switchboard.dev/v1alpha1
kind: ProxyModel
metadata: { name: ${name} }
spec:
  parentRefs: [{ group: gateway.networking.k8s.io, kind: HTTPRoute, name: models }]
  virtualModel:
${virtual}
${extra}`;
}

/** An OpenAI chat completion saying which vendor answered and which model it was asked for. */
export const completion = (who: string, model: unknown) => ({
  status: 200,
  body: { id: `chatcmpl-${who}`, object: 'chat.completion', created: 1, model, choices: [{ index: 0, message: { role: 'assistant', content: `from ${who}` }, finish_reason: 'stop' }], usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 } },
});

/** The Accepted condition of every status parent of a ProxyModel. */
export function acceptedOf(status: Record<string, unknown>): string[] {
  const parents = (status.parents ?? []) as { conditions: { type: string; status: string; reason: string }[] }[];
  return parents.flatMap((p) => p.conditions.filter((c) => c.type === 'Accepted').map((c) => `${c.status} ${c.reason}`));
}
