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

describe('ProxyRuntime compiles its first config in one piece', () => {
  /** Turns of the event loop (a setImmediate chain) while `apply` runs. */
  async function loopTurnsDuring(apply: () => Promise<{ errors: string[] }>): Promise<number> {
    let turns = 0;
    let counting = true;
    const tick = (): void => {
      if (!counting) return;
      turns++;
      setImmediate(tick);
    };
    setImmediate(tick);
    const { errors } = await apply();
    counting = false;
    assert.deepEqual(errors, []);
    return turns;
  }

  it('lets no turn of the loop in while the first config compiles (no bind is open, no request waits), and slices the next', async () => {
    // The backends are never called: a compile only reads their addresses.
    ports ??= { a: 1, b: 2 };
    // Slices of 0 ms: a sliced compile lets the loop turn after every backend, rule and listener.
    const runtime = new ProxyRuntime({ logger: silentLogger, bindAddress: '127.0.0.1', listenPort: () => 0, compileSliceMs: 0 });
    try {
      const first = await loopTurnsDuring(() => runtime.apply(bulk('svc-a', 300, 'v1')));
      const next = await loopTurnsDuring(() => runtime.apply(bulk('svc-b', 300, 'v2')));
      // The first apply's turns are its socket's listen, not the compile's 300 rules.
      assert.ok(first < 30, `first config: ${first} turns of the loop during its compile`);
      assert.ok(next >= 300, `next config: ${next} turns (a sliced compile)`);
    } finally {
      await runtime.close({ graceMs: 100 });
    }
  });
});

describe('ProxyRuntime after its first config', () => {
  it('runs afterFirstConfig once, before apply() resolves, and not for the configs after it', async () => {
    const echo = await startEchoServer({ name: 'a' });
    ports = { a: echo.port, b: echo.port };
    let runs = 0;
    const runtime = new ProxyRuntime({ logger: silentLogger, bindAddress: '127.0.0.1', listenPort: () => 0, afterFirstConfig: () => void runs++ });
    try {
      await runtime.apply(bulk('svc-a', 1, 'v1'));
      assert.equal(runs, 1);
      await runtime.apply(bulk('svc-a', 2, 'v2'));
      assert.equal(runs, 1, 'edits do not pay for it');
    } finally {
      await runtime.close({ graceMs: 100 });
      await echo.close();
    }
  });

  it('a failing afterFirstConfig leaves the config applied', async () => {
    const echo = await startEchoServer({ name: 'a' });
    ports = { a: echo.port, b: echo.port };
    const runtime = new ProxyRuntime({ logger: silentLogger, bindAddress: '127.0.0.1', listenPort: () => 0, afterFirstConfig: () => { throw new Error('no gc'); } });
    try {
      assert.deepEqual((await runtime.apply(bulk('svc-a', 0, 'v1'))).errors, []);
      assert.equal(runtime.ready(), true);
    } finally {
      await runtime.close({ graceMs: 100 });
      await echo.close();
    }
  });
});
