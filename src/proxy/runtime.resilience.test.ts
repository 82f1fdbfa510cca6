import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { silentLogger } from '../common/logger.ts';
import type { Filter, RouteRule } from '../ir/types.ts';
import { ProxyRuntime } from './runtime.ts';
import { http1 } from './testing/client.ts';
import { backend, route, rule, simpleConfig } from './testing/config.ts';
import { startEchoServer, type EchoRecord, type EchoServer } from './testing/echo-server.ts';

const at = (key: string, path: string, extra: Partial<RouteRule>) =>
  route(`default/${key}`, [rule(`default/${key}/rule/0`, { matches: [{ path: { type: 'PathPrefix', value: path } }], backends: [{ backendKey: 'svc-main', weight: 1, filters: [] }], ...extra })]);
const mirrorTo = (backendKey: string, percent?: number): Filter => ({ type: 'RequestMirror', backendKey, percent });

describe('ProxyRuntime timeouts and mirrors', () => {
  let main: EchoServer;
  let shadow: EchoServer;
  let runtime: ProxyRuntime;
  let port: number;

  before(async () => {
    main = await startEchoServer({ name: 'main' });
    shadow = await startEchoServer({ name: 'shadow' });
    runtime = new ProxyRuntime({ logger: silentLogger, bindAddress: '127.0.0.1', listenPort: () => 0 });
    const result = await runtime.apply(simpleConfig([
      at('request-timeout', '/request-timeout', { timeouts: { requestMs: 100 } }),
      at('backend-timeout', '/backend-timeout', { timeouts: { backendRequestMs: 100 } }),
      at('roomy-timeout', '/roomy', { timeouts: { requestMs: 30_000, backendRequestMs: 30_000 } }),
      at('mirror-all', '/mirror-all', { filters: [mirrorTo('svc-shadow')] }),
      at('mirror-none', '/mirror-none', { filters: [mirrorTo('svc-shadow', 0)] }),
      at('mirror-dead', '/mirror-dead', { filters: [mirrorTo('svc-dead')] }),
    ], [backend('svc-main', [main.port]), backend('svc-shadow', [shadow.port]), backend('svc-dead', [1])]));
    assert.deepEqual(result.errors, []);
    port = runtime.portOf(80) as number;
  });

  after(async () => {
    await runtime.close({ graceMs: 1000 });
    await Promise.all([main.close(), shadow.close()]);
  });

  const timeoutCases = [
    { name: 'the whole-request timeout answers 504', path: '/request-timeout', code: 'request_timeout' },
    { name: 'the per-attempt backend timeout answers 504', path: '/backend-timeout', code: 'upstream_timeout' },
  ];
  for (const c of timeoutCases) {
    it(c.name, async () => {
      const r = await http1(port, { path: c.path, headers: { 'x-echo-delay-ms': '5000' } });
      assert.equal(r.status, 504);
      assert.equal((JSON.parse(r.body) as { error: { code: string } }).error.code, c.code);
    });
  }

  it('lets requests within their timeouts through', async () => {
    const r = await http1(port, { path: '/roomy', headers: { 'x-echo-delay-ms': '20' } });
    assert.equal(r.status, 200);
  });

  it('never mirrors at 0 percent, mirrors a full copy at 100, and answers from the main backend', async () => {
    const before = shadow.seen.length;
    for (let i = 0; i < 5; i++) assert.equal((await http1(port, { path: '/mirror-none' })).status, 200);
    const r = await http1(port, { method: 'POST', path: '/mirror-all/x?y=1', body: 'copy me', headers: { 'content-type': 'text/plain' } });
    assert.equal((JSON.parse(r.body) as EchoRecord).name, 'main');
    await shadow.waitFor(before + 1);
    const copies = shadow.seen.slice(before);
    assert.deepEqual(copies.map((c) => c.url), ['/mirror-all/x?y=1']);
    assert.equal(copies[0].body, 'copy me');
    assert.equal(copies[0].method, 'POST');
  });

  it('streams a large body to the main backend and the mirror alike', async () => {
    const before = shadow.seen.length;
    const body = 'z'.repeat(300_000);
    const r = await http1(port, { method: 'POST', path: '/mirror-all/big', body });
    assert.equal((JSON.parse(r.body) as EchoRecord).body.length, body.length);
    await shadow.waitFor(before + 1);
    assert.equal(shadow.seen[before].body.length, body.length);
  });

  it('keeps a failing mirror away from the client', async () => {
    const r = await http1(port, { method: 'POST', path: '/mirror-dead', body: 'x' });
    assert.equal(r.status, 200);
    assert.equal((JSON.parse(r.body) as EchoRecord).body, 'x');
  });
});
