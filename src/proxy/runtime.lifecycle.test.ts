import assert from 'node:assert/strict';
import { Agent, request as httpRequest } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { silentLogger } from '../common/logger.ts';
import type { ProxyConfig } from '../ir/types.ts';
import { ProxyRuntime } from './runtime.ts';
import { http1, type TestResponse } from './testing/client.ts';
import { backend, bind, config, listener, route, rule } from './testing/config.ts';
import { startEchoServer, type EchoRecord, type EchoServer } from './testing/echo-server.ts';

/** Version `n` sends everything to `a` or `b` and stamps the version on the upstream request. */
function versioned(n: number, ports: { a: number; b: number }, bindPorts: readonly number[] = [80]): ProxyConfig {
  const target = n % 2 === 0 ? 'svc-a' : 'svc-b';
  const r = route('default/r', [rule('default/r/rule/0', {
    filters: [{ type: 'RequestHeaderModifier', set: [{ name: 'x-config', value: `v${n}` }], add: [], remove: [] }],
    backends: [{ backendKey: target, weight: 1, filters: [] }],
  })]);
  return config({
    version: `v${n}`,
    binds: bindPorts.map((p) => bind(p, [listener(`l${p}`, ['default/r'])])),
    routes: [r],
    backends: [backend('svc-a', [ports.a]), backend('svc-b', [ports.b])],
  });
}

function keepAliveGet(agent: Agent, port: number, path: string, headers: Record<string, string> = {}): Promise<TestResponse> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, agent, headers }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

describe('ProxyRuntime config swaps and lifecycle', () => {
  let a: EchoServer;
  let b: EchoServer;
  let runtime: ProxyRuntime;
  let ports: { a: number; b: number };

  before(async () => {
    a = await startEchoServer({ name: 'a' });
    b = await startEchoServer({ name: 'b' });
    ports = { a: a.port, b: b.port };
    runtime = new ProxyRuntime({ logger: silentLogger, bindAddress: '127.0.0.1', listenPort: () => 0 });
    assert.deepEqual((await runtime.apply(versioned(0, ports))).errors, []);
  });

  after(async () => {
    await runtime.close({ graceMs: 1000 });
    await Promise.all([a.close(), b.close()]);
  });

  it('swaps the route table 100 times under steady load without dropping a request', async () => {
    const port = runtime.portOf(80) as number;
    const agent = new Agent({ keepAlive: true, maxSockets: 4 });
    let swapping = true;
    const failures: string[] = [];
    let served = 0;
    const client = async () => {
      while (swapping) {
        try {
          const r = await keepAliveGet(agent, port, '/load');
          const seen = JSON.parse(r.body) as EchoRecord;
          // Each answer must come entirely from one config: v<even> → a, v<odd> → b.
          const n = Number(String(seen.headers['x-config']).slice(1));
          if (r.status !== 200 || seen.name !== (n % 2 === 0 ? 'a' : 'b')) failures.push(`${r.status} ${r.body}`);
          served++;
        } catch (err) {
          failures.push(String(err));
        }
      }
    };
    const clients = Array.from({ length: 4 }, client);
    for (let n = 1; n <= 100; n++) {
      const result = await runtime.apply(versioned(n, ports));
      assert.deepEqual(result.errors, []);
      await new Promise((resolve) => setImmediate(resolve));
    }
    swapping = false;
    await Promise.all(clients);
    agent.destroy();
    assert.deepEqual(failures, []);
    assert.ok(served > 0);
    assert.equal(runtime.portOf(80), port, 'an unchanged bind keeps its socket');
    assert.equal(runtime.current()?.version, 'v100');
  });

  it('keeps upstream connections of unchanged endpoints across swaps', async () => {
    // A fresh upstream, so its pool holds exactly the one connection the first request opens.
    const c = await startEchoServer({ name: 'c' });
    const only = { a: c.port, b: c.port };
    await runtime.apply(versioned(100, only));
    const port = runtime.portOf(80) as number;
    const first = JSON.parse((await http1(port, { path: '/pooled' })).body) as EchoRecord;
    await runtime.apply(versioned(102, only));
    const second = JSON.parse((await http1(port, { path: '/pooled' })).body) as EchoRecord;
    assert.equal(second.headers['x-config'], 'v102');
    assert.equal(second.remotePort, first.remotePort);
    await runtime.apply(versioned(104, ports));
    await c.close();
  });

  it('finishes an in-flight request on the config it started with', async () => {
    await runtime.apply(versioned(200, ports));
    const port = runtime.portOf(80) as number;
    const slow = http1(port, { path: '/slow', headers: { 'x-echo-delay-ms': '300' } });
    await a.waitFor(a.seen.length + 1);
    await runtime.apply(versioned(201, ports));
    const seen = JSON.parse((await slow).body) as EchoRecord;
    assert.equal(seen.name, 'a');
    assert.equal(seen.headers['x-config'], 'v200');
    assert.equal((JSON.parse((await http1(port, { path: '/after' })).body) as EchoRecord).name, 'b');
  });

  it('opens added binds, closes removed ones and keeps the rest', async () => {
    await runtime.apply(versioned(300, ports, [80, 81]));
    const kept = runtime.portOf(80);
    const removed = runtime.portOf(81) as number;
    assert.equal((await http1(removed, { path: '/' })).status, 200);
    await runtime.apply(versioned(301, ports, [80, 82]));
    assert.equal(runtime.portOf(80), kept);
    assert.equal(runtime.portOf(81), undefined);
    await assert.rejects(http1(removed, { path: '/' }), /ECONNREFUSED/);
    assert.equal((await http1(runtime.portOf(82) as number, { path: '/' })).status, 200);
    assert.equal(runtime.ready(), true);
  });

  it('reports a bind that cannot listen and is not ready', async () => {
    const blocked = new ProxyRuntime({ logger: silentLogger, bindAddress: '127.0.0.1', listenPort: () => runtime.portOf(80) as number });
    const result = await blocked.apply(versioned(0, ports));
    assert.equal(result.errors.length, 1);
    assert.match(result.errors[0], /cannot listen/);
    assert.equal(blocked.ready(), false);
    await blocked.close({ graceMs: 100 });
  });

  it('finishes an in-flight request on a keep-alive connection during close', async () => {
    const closing = new ProxyRuntime({ logger: silentLogger, bindAddress: '127.0.0.1', listenPort: () => 0 });
    await closing.apply(versioned(0, ports));
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const port = closing.portOf(80) as number;
    const inFlight = keepAliveGet(agent, port, '/drain-keepalive', { 'x-echo-delay-ms': '200' });
    await a.waitFor(a.seen.length + 1);
    await closing.close({ graceMs: 30_000 });
    assert.equal((await inFlight).status, 200);
    agent.destroy();
  });

  it('drains in-flight requests on close, then refuses new connections', async () => {
    const closing = new ProxyRuntime({ logger: silentLogger, bindAddress: '127.0.0.1', listenPort: () => 0 });
    await closing.apply(versioned(0, ports));
    const port = closing.portOf(80) as number;
    const inFlight = http1(port, { path: '/drain', headers: { 'x-echo-delay-ms': '200' } });
    await a.waitFor(a.seen.length + 1);
    await closing.close({ graceMs: 5000 });
    assert.equal((await inFlight).status, 200);
    assert.equal(closing.ready(), false);
    await assert.rejects(http1(port, { path: '/' }), /ECONNREFUSED/);
    assert.deepEqual((await closing.apply(versioned(1, ports))).errors, ['the proxy runtime is closed']);
  });
});
