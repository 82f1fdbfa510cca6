import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { silentLogger } from '../../common/logger.ts';
import type { TrafficPolicy } from '../../ir/policy.ts';
import type { WeightedBackend } from '../../ir/types.ts';
import { ProxyRuntime } from '../runtime.ts';
import { http1 } from '../testing/client.ts';
import { backend, route, rule, simpleConfig } from '../testing/config.ts';
import { startEchoServer, type EchoRecord, type EchoServer } from '../testing/echo-server.ts';

const to = (backendKey: string): WeightedBackend => ({ backendKey, weight: 1, filters: [] });
const prefix = (value: string) => [{ path: { type: 'PathPrefix' as const, value } }];
const policy = (p: Omit<TrafficPolicy, 'sources'>): TrafficPolicy => ({ sources: {}, ...p });

/** The traffic-policy chain through a real runtime: answers, header changes, fail-closed cases. */
describe('traffic policy chain', () => {
  let upstream: EchoServer;
  let runtime: ProxyRuntime;
  let port: number;

  before(async () => {
    upstream = await startEchoServer({ name: 'up' });
    const routes = [
      route('default/direct', [rule('default/direct/rule/0', {
        matches: prefix('/direct'),
        backends: [to('svc')],
        traffic: policy({
          directResponse: {
            conditional: [
              { condition: 'request.headers["x-mode"] == "teapot"', policy: { status: 418, bodyExpression: '"short and stout: " + request.path', headers: [{ name: 'X-Answer', value: '"cel"' }] } },
              { condition: 'request.headers["x-mode"] == "pass"', policy: { status: 204 } },
            ],
          },
          headerModifiers: { request: { set: [{ name: 'x-policy', value: 'set' }] }, response: { add: [{ name: 'x-policy-response', value: 'added' }] } },
        }),
      })]),
      route('default/invalid', [rule('default/invalid/rule/0', {
        matches: prefix('/invalid'),
        backends: [to('svc')],
        traffic: policy({ invalid: [{ source: 'ProxyPolicy/default/broken', message: 'bad CEL' }] }),
      })]),
      route('default/bad-cel', [rule('default/bad-cel/rule/0', {
        matches: prefix('/bad-cel'),
        backends: [to('svc')],
        traffic: policy({ directResponse: { status: 200, bodyExpression: 'request.path +' } }),
      })]),
    ];
    runtime = new ProxyRuntime({ logger: silentLogger, bindAddress: '127.0.0.1', listenPort: () => 0 });
    const applied = await runtime.apply(simpleConfig(routes, [backend('svc', [upstream.port])]));
    assert.equal(applied.errors.length, 1, applied.errors.join('\n'));
    assert.match(applied.errors[0], /bodyExpression: invalid CEL expression/);
    port = runtime.portOf(80) as number;
  });

  after(async () => {
    await runtime.close({ graceMs: 100 });
    await upstream.close();
  });

  it('answers from a conditional direct response with CEL body and headers, and still applies response mutations', async () => {
    const r = await http1(port, { path: '/direct/kettle', headers: { 'x-mode': 'teapot' } });
    assert.equal(r.status, 418);
    assert.equal(r.body, 'short and stout: /direct/kettle');
    assert.equal(r.headers['x-answer'], 'cel');
    assert.equal(r.headers['x-policy-response'], undefined, 'header modifiers run after directResponse, so they never saw this request');
  });

  it('picks the next branch when the first condition is false', async () => {
    const r = await http1(port, { path: '/direct', headers: { 'x-mode': 'pass' } });
    assert.equal(r.status, 204);
  });

  it('forwards when no branch matches, with the policy header changes on both sides', async () => {
    const r = await http1(port, { path: '/direct' });
    assert.equal(r.status, 200);
    const seen = JSON.parse(r.body) as EchoRecord;
    assert.equal(seen.headers['x-policy'], 'set');
    assert.equal(r.headers['x-policy-response'], 'added');
  });

  it('fails closed with 500 when an invalid policy applies', async () => {
    const r = await http1(port, { path: '/invalid' });
    assert.equal(r.status, 500);
    assert.match(r.body, /policy_invalid/);
    assert.equal(upstream.seen.filter((s) => s.url.startsWith('/invalid')).length, 0);
  });

  it('fails closed with 500 when a member does not compile', async () => {
    const r = await http1(port, { path: '/bad-cel' });
    assert.equal(r.status, 500);
  });
});
