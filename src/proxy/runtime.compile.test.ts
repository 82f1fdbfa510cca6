import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { silentLogger } from '../common/logger.ts';
import type { ProxyConfig, Route } from '../ir/types.ts';
import { ProxyRuntime } from './runtime.ts';
import { http1 } from './testing/client.ts';
import { backend, bind, config, listener, route, rule } from './testing/config.ts';
import { startEchoServer, type EchoRecord, type EchoServer } from './testing/echo-server.ts';

/** `/x` to `target`, plus `count` routes `/bulk/<i>` each with a CEL authorization rule (the costly part of a compile). */
function bulk(target: string, count: number, version: string, extraRoutes: readonly Route[] = []): ProxyConfig {
  const routes: Route[] = [route('default/x', [rule('default/x/rule/0', {
    matches: [{ path: { type: 'PathPrefix', value: '/x' } }],
    backends: [{ backendKey: target, weight: 1, filters: [] }],
  })]), ...extraRoutes];
  for (let i = 0; i < count; i++) {
    routes.push(route(`default/bulk-${i}`, [rule(`default/bulk-${i}/rule/0`, {
      matches: [{ path: { type: 'PathPrefix', value: `/bulk/${i}` } }],
      backends: [{ backendKey: target, weight: 1, filters: [] }],
      traffic: {
        authorization: { rules: [{ action: 'Deny', matchExpressions: [`request.path.startsWith("/bulk/${i}/admin") && request.headers["x-role"] != "admin"`], source: 'ProxyPolicy/default/p' }] },
        sources: { authorization: ['ProxyPolicy/default/p'] },
      },
    })]));
  }
  return config({ version, binds: [bind(80, [listener('http', routes.map((r) => r.key))])], routes, backends: [backend('svc-a', [ports.a]), backend('svc-b', [ports.b])] });
}

let ports: { a: number; b: number };

describe('ProxyRuntime compiles a large config in slices', () => {
  let a: EchoServer;
  let b: EchoServer;
  let runtime: ProxyRuntime;

  before(async () => {
    a = await startEchoServer({ name: 'a' });
    b = await startEchoServer({ name: 'b' });
    ports = { a: a.port, b: b.port };
    runtime = new ProxyRuntime({ logger: silentLogger, bindAddress: '127.0.0.1', listenPort: () => 0 });
    assert.deepEqual((await runtime.apply(bulk('svc-a', 0, 'v0'))).errors, []);
  });

  after(async () => {
    await runtime.close({ graceMs: 1000 });
    await Promise.all([a.close(), b.close()]);
  });

  it('serves requests on the current config while the next one compiles, then swaps it in whole', async () => {
    const port = runtime.portOf(80) as number;
    const broken = route('default/broken', [rule('default/broken/rule/0', {
      traffic: { authorization: { rules: [{ action: 'Deny', matchExpressions: ['request.path.('], source: 'ProxyPolicy/default/bad' }] }, sources: { authorization: ['ProxyPolicy/default/bad'] } },
    })]);
    let applied = false;
    // 5,000 CEL programs: a few hundred milliseconds of compile, which in one piece kept this request waiting until the swap.
    const applying = runtime.apply(bulk('svc-b', 5_000, 'v1', [broken])).then((result) => {
      applied = true;
      return result;
    });
    const during = await http1(port, { path: '/x' });
    const answeredBeforeSwap = !applied;
    const result = await applying;

    assert.equal(answeredBeforeSwap, true, 'the request was answered only after the new config was swapped in');
    assert.equal(during.status, 200);
    assert.equal((JSON.parse(during.body) as EchoRecord).name, 'a', 'a request during the compile is served by the current config');
    // A compile error still surfaces with the apply, as before slicing.
    assert.equal(result.errors.length, 1);
    assert.match(result.errors[0], /default\/broken\/rule\/0: .*invalid CEL expression/);

    const after = await http1(port, { path: '/x' });
    assert.equal((JSON.parse(after.body) as EchoRecord).name, 'b');
    assert.equal((await http1(port, { path: '/bulk/4999/admin', headers: { 'x-role': 'guest' } })).status, 403);
    assert.equal((await http1(port, { path: '/bulk/4999/admin', headers: { 'x-role': 'admin' } })).status, 200);
  });
});
