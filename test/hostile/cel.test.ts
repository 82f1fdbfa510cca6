/**
 * Hostile CEL (issue 11, item 4): an authorization rule whose evaluation is unbounded stalled every
 * request (eight nested all() over ten-element lists: 37 s per request) or ran the process out of
 * heap (nested map()). Bounds (docs/cel.md "Cost limits"):
 *   - an expression whose static worst case is over budget is refused at translation: the policy
 *     reports it, and the route it guards fails closed;
 *   - an expression the estimate allows but whose cost a request can inflate stops at the runtime
 *     budget: that request is refused, others are served meanwhile, memory stays bounded.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startEchoServer, type EchoServer } from '../support/echo-server.ts';
import { gatewayClass, gateway, prefixRoute, routeTrafficPolicy, service } from '../support/manifests.ts';
import { PROMPT_MS, probeWhile, rssMiB, startHostileGateway, type HostileGateway } from './harness.ts';

const TEN = '[0,1,2,3,4,5,6,7,8,9]';
const NESTED_ALL = `${TEN}.all(a, ${TEN}.all(b, ${TEN}.all(c, ${TEN}.all(d, ${TEN}.all(e, ${TEN}.all(f, ${TEN}.all(g, ${TEN}.all(h, h >= 0))))))))`;
/** Quadratic in the body: every element re-parses the body and scans it. */
const REREAD_BODY = 'json(request.body).a.all(x, x in json(request.body).a)';
/** Quadratic memory in the body: a copy of the body's list per element. */
const GROW_FROM_BODY = 'size(json(request.body).a.map(x, json(request.body).a)) > 0';

const authorization = (expression: string): string => `authorization:\n  policy: { matchExpressions: [${JSON.stringify(expression)}] }`;
/** `{"a":[0,1,…]}`: 110 KB, far under the 2 MiB body limit. */
const hostileBody = JSON.stringify({ a: Array.from({ length: 20_000 }, (_, i) => i) });
const smallBody = JSON.stringify({ a: [1, 2, 3] });

interface StatusItem { kind: string; metadata: { name: string }; status?: { conditions?: { type: string; status: string; message: string }[] } }

describe('hostile CEL', () => {
  let echo: EchoServer;
  let gw: HostileGateway;
  before(async () => {
    echo = await startEchoServer('echo');
    const yaml = gatewayClass() + gateway('gw', [{ name: 'http', port: 65000 }]).replace('port: 65000', 'port: {{listener.port}}')
      + service('echo', echo)
      + prefixRoute('nested', '/nested', 'echo') + routeTrafficPolicy('nested-all', 'nested', authorization(NESTED_ALL))
      + prefixRoute('reread', '/reread', 'echo') + routeTrafficPolicy('reread-body', 'reread', authorization(REREAD_BODY))
      + prefixRoute('grow', '/grow', 'echo') + routeTrafficPolicy('grow-from-body', 'grow', authorization(GROW_FROM_BODY))
      + prefixRoute('ok', '/ok', 'echo');
    gw = await startHostileGateway(yaml);
  });
  after(async () => { await gw?.close(); await echo?.close(); });

  const ordinary = async (): Promise<void> => {
    const r = await gw.request({ path: '/ok' });
    assert.equal(r.status, 200);
  };

  it('reports an over-budget rule on its policy and fails its route closed', async () => {
    const status = JSON.parse((await gw.admin('/status')).text) as { items: StatusItem[] };
    const policy = status.items.find((i) => i.kind === 'ProxyPolicy' && i.metadata.name === 'nested-all');
    const accepted = policy?.status?.conditions?.find((c) => c.type === 'Accepted');
    assert.equal(accepted?.status, 'False');
    assert.match(accepted?.message ?? '', /^spec\.traffic\.authorization\.policy\.matchExpressions\[0\]: CEL expression over its cost budget: estimated cost [\d,]+ exceeds the budget of [\d,]+/);

    const started = performance.now();
    const refused = await gw.request({ path: '/nested' });
    assert.equal(refused.status, 500);
    await ordinary();
    assert.ok(performance.now() - started < PROMPT_MS, `${Math.round(performance.now() - started)} ms`);
  });

  it('accepts rules whose cost depends on the request, and evaluates them for ordinary requests', async () => {
    for (const path of ['/reread', '/grow']) {
      const r = await gw.request({ path, method: 'POST', headers: { 'content-type': 'application/json' }, body: smallBody });
      assert.equal(r.status, 200, path);
    }
  });

  for (const { path, what } of [{ path: '/reread', what: 'CPU' }, { path: '/grow', what: 'memory' }]) {
    it(`stops a request that inflates a rule's ${what} at the runtime budget (${path})`, async () => {
      const before = await rssMiB(gw.pid);
      let hostileMs = 0;
      const report = await probeWhile(async () => {
        const t0 = performance.now();
        const r = await gw.request({ path, method: 'POST', headers: { 'content-type': 'application/json' }, body: hostileBody });
        hostileMs = performance.now() - t0;
        return r.status;
      }, ordinary, { warmupMs: 0 });
      assert.equal(report.hostile.status, 'fulfilled');
      // The rule fails with cost_limit_exceeded: a failing Allow does not allow.
      assert.equal(report.hostile.status === 'fulfilled' ? report.hostile.value : undefined, 403);
      assert.ok(hostileMs < PROMPT_MS, `hostile request took ${Math.round(hostileMs)} ms`);
      assert.ok(report.worstProbeMs < PROMPT_MS, `an ordinary request took ${Math.round(report.worstProbeMs)} ms`);
      const grown = (await rssMiB(gw.pid)) - before;
      assert.ok(grown < 200, `RSS grew by ${Math.round(grown)} MiB`);
      await ordinary(); // the process survived
    });
  }
});
