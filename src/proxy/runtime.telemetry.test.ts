import assert from 'node:assert/strict';
import { EventEmitter, once } from 'node:events';
import { request as httpRequest } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { ProxyRuntime } from './runtime.ts';
import { http1 } from './testing/client.ts';
import { backend, route, rule, simpleConfig } from './testing/config.ts';
import { startEchoServer, type EchoServer } from './testing/echo-server.ts';

interface LogLine { msg: string; method?: string; path?: string; status?: number; durationMs?: number; route?: string; backend?: string; bytes?: number }

describe('ProxyRuntime access log and metrics', () => {
  let echo: EchoServer;
  let runtime: ProxyRuntime;
  let port: number;
  const registry = new Registry();
  const lines: LogLine[] = [];
  const logged = new EventEmitter();

  before(async () => {
    echo = await startEchoServer();
    const logger = pino({ level: 'info' }, { write: (line: string) => { lines.push(JSON.parse(line) as LogLine); logged.emit('line'); } });
    runtime = new ProxyRuntime({ logger, registry, bindAddress: '127.0.0.1', listenPort: () => 0 });
    await runtime.apply(simpleConfig([route('default/r', [rule('default/r/rule/0', { backends: [{ backendKey: 'svc', weight: 1, filters: [] }] })])], [backend('svc', [echo.port])]));
    port = runtime.portOf(80) as number;
  });

  after(async () => {
    await runtime.close({ graceMs: 1000 });
    await echo.close();
  });

  const requestLines = () => lines.filter((l) => l.msg === 'request');
  async function nextRequestLine(count: number): Promise<LogLine> {
    while (requestLines().length < count) await once(logged, 'line', { signal: AbortSignal.timeout(5000) });
    return requestLines()[count - 1];
  }

  it('writes one line per request without the query string', async () => {
    const before = requestLines().length;
    const r = await http1(port, { path: '/logged?api_key=secret' });
    const line = await nextRequestLine(before + 1);
    assert.equal(line.method, 'GET');
    assert.equal(line.path, '/logged');
    assert.equal(line.status, 200);
    assert.equal(line.route, 'default/r');
    assert.equal(line.backend, 'svc');
    assert.equal(line.bytes, Buffer.byteLength(r.body));
    assert.equal(typeof line.durationMs, 'number');
    assert.equal(requestLines().length, before + 1);
  });

  it('records a client that gives up as 499 and stops the upstream exchange', async () => {
    const before = requestLines().length;
    const seen = echo.seen.length;
    const req = httpRequest({ host: '127.0.0.1', port, path: '/abandoned', headers: { 'x-echo-delay-ms': '3000' }, agent: false });
    req.on('error', () => undefined);
    req.end();
    await echo.waitFor(seen + 1);
    req.destroy();
    const line = await nextRequestLine(before + 1);
    assert.equal(line.status, 499);
    assert.equal(line.path, '/abandoned');
  });

  it('counts open downstream connections', async () => {
    const req = httpRequest({ host: '127.0.0.1', port, path: '/', headers: { 'x-echo-delay-ms': '200' }, agent: false });
    req.end();
    await echo.waitFor(echo.seen.length + 1);
    const gauge = (await registry.getSingleMetricAsString('switchboard_active_connections')).split('\n').pop() ?? '';
    assert.ok(Number(gauge.split(' ')[1]) >= 1, gauge);
    const [res] = (await once(req, 'response')) as [NodeJS.ReadableStream];
    res.resume();
    await once(res, 'end');
  });
});
