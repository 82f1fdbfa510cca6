import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { translate } from '../index.ts';
import { keysSecret, llmGatewayYaml } from '../../../../test/llm/gateway-yaml.ts';
import { service } from '../../../../test/support/manifests.ts';

function guardsOf(guards: string, extra = ''): { promptGuard: Record<string, unknown[]>; backends: string[]; statuses: string; config: string } {
  const yaml = llmGatewayYaml([{ name: 'ai', prefix: '/' }], `${keysSecret({ ai: 'sk-1', mod: 'sk-mod' })}---
${service('hook', { host: '10.0.0.7', port: 9000 })}---
${extra}apiVersion: switchboard.dev/v1alpha1
kind: ProxyBackend
metadata: { name: ai }
spec:
  ai:
    provider: { providerA: {}, host: 127.0.0.1, port: 1 }
  policies:
    ai:
      promptGuard:
${guards}
`);
  const { config, statuses } = translate(parseAllDocuments(yaml).map((d) => d.toJS() as never).filter(Boolean));
  const policy = findBackendPolicy(config) as { ai?: { promptGuard: Record<string, unknown[]> } } | undefined;
  return { promptGuard: policy?.ai?.promptGuard ?? {}, backends: Object.keys(config.backends), statuses: JSON.stringify(statuses), config: JSON.stringify(config) };
}

/** The route's effective backend policy (the first `backendPolicy` in the config). */
function findBackendPolicy(node: unknown): unknown {
  if (typeof node !== 'object' || node === null) return undefined;
  if ('backendPolicy' in node) return (node as { backendPolicy: unknown }).backendPolicy;
  for (const v of Object.values(node)) {
    const found = findBackendPolicy(v);
    if (found !== undefined) return found;
  }
  return undefined;
}

describe('ai.promptGuard lowering', () => {
  it('a webhook backendRef becomes backendKey and the url of its first ready endpoint; header match names lower-cased, type Exact', () => {
    const { promptGuard, backends } = guardsOf(`        request:
          - webhook: { backendRef: { name: hook, port: 8080 }, forwardHeaderMatches: [{ name: X-Team, value: a }], failureMode: FailOpen }`);
    assert.deepEqual(promptGuard.request, [{ webhook: { backendKey: 'service/default/hook:8080', url: 'http://10.0.0.7:9000', forwardHeaderMatches: [{ name: 'x-team', value: 'a', type: 'Exact' }], failureMode: 'FailOpen' } }]);
    assert.ok(backends.includes('service/default/hook:8080'), 'the webhook Service is published with the route');
  });

  it("a remote guard's policies are lowered as backend policies: Secret refs resolved, durations in ms", () => {
    const { promptGuard } = guardsOf(`        request:
          - providerAModeration: { policies: { auth: { secretRef: { name: keys, key: mod } }, http: { requestTimeout: 2s } } }
        response:
          - cloudAGuardrails: { identifier: g, version: '1', region: eu-west-1, policies: { auth: { cloudA: { secretRef: { name: aws } } } } }`, `apiVersion: v1
kind: Secret
metadata: { name: aws }
stringData: { accessKey: AK, secretKey: SK }
---
`);
    assert.deepEqual(promptGuard.request, [{ providerAModeration: { policies: { auth: { key: 'sk-mod' }, http: { requestTimeoutMs: 2000 } } } }]);
    assert.deepEqual(promptGuard.response, [{ cloudAGuardrails: { identifier: 'g', version: '1', region: 'eu-west-1', policies: { auth: { cloudA: { secret: { accessKey: 'AK', secretKey: 'SK' } } } } } }]);
  });

  it('a webhook Service that does not exist makes the backend policy invalid (fail closed)', () => {
    const { config } = guardsOf(`        request:
          - webhook: { backendRef: { name: nope, port: 8080 } }`);
    // The effective backend policy is invalid: the proxy answers 500 rather than serve the route unguarded.
    assert.match(config, /"invalid":\[\{"source":"ProxyBackend\/default\/ai","message":"[^"]*promptGuard\.request\[0\]\.webhook\.backendRef: Service default\/nope not found/);
  });

  it('a regex pattern RE2 cannot compile makes the backend policy invalid at translation', () => {
    const { config } = guardsOf(`        response:
          - regex: { matches: ["ok", "(unclosed"] }`);
    assert.match(config, /"invalid":\[\{"source":"ProxyBackend\/default\/ai","message":"[^"]*promptGuard\.response\[0\]\.regex\.matches\[1\]: invalid RE2 pattern/);
    assert.doesNotMatch(guardsOf(`        response:
          - regex: { matches: ["ok"] }`).config, /"invalid":\[\{/);
  });
});
