/**
 * Issue 11 item 3 and the protocol-strictness part of item 8, against the real CLI: a route with a
 * Deny on `request.path.startsWith("/admin")` must hold for every spelling of `/admin` an upstream
 * would resolve to it — percent-encoded letters, encoded and raw dot-segments, doubled slashes —
 * over HTTP/1.1, h2c and WebSocket upgrades; what cannot be made unambiguous (encoded slashes,
 * backslashes, NUL) is refused; the upstream receives the canonical path. Host: one only on
 * HTTP/1.1 (RFC 9112 §3.2), an absolute-form target's authority wins (§3.2.2), an h2 `host` that
 * disagrees with `:authority` is malformed (RFC 9113 §8.3.1). Idle h2c sessions are closed by the
 * listener's idle timeout.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import http2 from 'node:http2';
import { connect, type AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { stringify } from 'yaml';
import { gateway, gatewayClass, routeTrafficPolicy, service } from '../support/manifests.ts';
import { startWebSocketEcho, type WebSocketEchoServer } from '../support/ws-echo.ts';
import { startHostileGateway, type HostileGateway } from './harness.ts';

/** An upstream that records the request target exactly as it arrived (no URL parsing). */
interface RecordingUpstream {
  readonly host: '127.0.0.1';
  readonly port: number;
  readonly targets: string[];
  readonly hosts: string[];
  close(): Promise<void>;
}

async function startRecordingUpstream(): Promise<RecordingUpstream> {
  const targets: string[] = [];
  const hosts: string[] = [];
  const server = http.createServer((req, res) => {
    targets.push(req.url ?? '');
    hosts.push(req.headers.host ?? '');
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ target: req.url, host: req.headers.host }));
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  return {
    host: '127.0.0.1',
    port: (server.address() as AddressInfo).port,
    targets,
    hosts,
    close: () => {
      server.closeAllConnections();
      return new Promise((ok) => server.close(() => ok()));
    },
  };
}

const IDLE_MS = 1_000;
const DENY_ADMIN = `authorization:
  action: Deny
  policy:
    matchExpressions: ['request.path.startsWith("/admin")']`;

function route(name: string, hostname: string, backend: string): string {
  return `
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: ${name}, namespace: default }
spec:
  parentRefs: [{ name: gw }]
  hostnames: [${hostname}]
  rules:
    - matches: [{ path: { type: PathPrefix, value: / } }]
      backendRefs: [{ name: ${backend}, port: 8080 }]
`;
}

function frontendIdle(ms: number): string {
  return `---\n${stringify({
    apiVersion: 'switchboard.dev/v1alpha1',
    kind: 'ProxyPolicy',
    metadata: { name: 'idle', namespace: 'default' },
    spec: { targetRefs: [{ group: 'gateway.networking.k8s.io', kind: 'Gateway', name: 'gw' }], frontend: { http: { http1IdleTimeout: `${ms}ms` } } },
  })}`;
}

/** Writes `head` on a fresh connection and reads until the gateway closes it (or 5 s pass). */
function raw(port: number, head: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    const finish = () => {
      const text = Buffer.concat(chunks).toString('latin1');
      resolve({ status: Number(/^HTTP\/1\.[01] (\d{3})/.exec(text)?.[1] ?? 0), text });
    };
    socket.setTimeout(5_000, () => {
      socket.destroy();
      reject(new Error(`no answer to ${JSON.stringify(head.slice(0, 60))} within 5 s`));
    });
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', finish);
    socket.on('close', finish);
    socket.write(head, 'latin1');
  });
}

const get = (port: number, target: string, host = 'app.example') => raw(port, `GET ${target} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);

/** One h2c request with the `:path` given verbatim (and extra headers). */
async function h2c(port: number, path: string, headers: Record<string, string> = {}): Promise<number> {
  const session = http2.connect(`http://127.0.0.1:${port}`);
  try {
    return await new Promise<number>((resolve, reject) => {
      session.on('error', reject);
      const stream = session.request({ ':method': 'GET', ':path': path, ':authority': 'app.example', ...headers });
      stream.on('response', (h) => resolve(Number(h[':status'])));
      stream.on('error', reject);
      stream.on('close', () => resolve(0));
      stream.resume();
      stream.end();
    });
  } finally {
    session.close();
  }
}

/**
 * One HTTP/2 request written frame by frame, because node's client refuses to send a `host` field
 * twice: HPACK literals without indexing, then the status of the answer (HPACK static entries
 * 8 = 200, 12 = 400; another status is 'other'), or 'reset' when the stream is reset.
 */
function rawH2(port: number, fields: readonly (readonly [string, string])[]): Promise<200 | 400 | 'other' | 'reset' | 'closed'> {
  const frame = (type: number, flags: number, stream: number, payload: Buffer) => {
    const head = Buffer.alloc(9);
    head.writeUIntBE(payload.length, 0, 3);
    head[3] = type;
    head[4] = flags;
    head.writeUInt32BE(stream, 5);
    return Buffer.concat([head, payload]);
  };
  const block = Buffer.concat(fields.map(([name, value]) => Buffer.concat([Buffer.from([0x00, name.length]), Buffer.from(name), Buffer.from([value.length]), Buffer.from(value)])));
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let buffered = Buffer.alloc(0);
    socket.setTimeout(5_000, () => {
      socket.destroy();
      reject(new Error('no HTTP/2 answer within 5 s'));
    });
    socket.on('data', (c: Buffer) => {
      buffered = Buffer.concat([buffered, c]);
      while (buffered.length >= 9) {
        const length = buffered.readUIntBE(0, 3);
        if (buffered.length < 9 + length) return;
        const type = buffered[3];
        const stream = buffered.readUInt32BE(5) & 0x7fffffff;
        const payload = buffered.subarray(9, 9 + length);
        buffered = buffered.subarray(9 + length);
        if (type === 0x1 && stream === 1) {
          socket.destroy();
          resolve(payload[0] === 0x88 ? 200 : payload[0] === 0x8c ? 400 : 'other');
          return;
        }
        if (type === 0x3 && stream === 1) {
          socket.destroy();
          resolve('reset');
          return;
        }
      }
    });
    socket.on('error', () => undefined);
    socket.on('close', () => resolve('closed'));
    socket.write(Buffer.concat([Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1'), frame(0x4, 0, 0, Buffer.alloc(0)), frame(0x1, 0x5, 1, block)]));
  });
}

/** A WebSocket upgrade on a raw socket: the status line, and the upstream's greeting (its path) on 101. */
function upgrade(port: number, target: string): Promise<{ status: number; path?: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let buffered = Buffer.alloc(0);
    socket.setTimeout(5_000, () => {
      socket.destroy();
      reject(new Error(`no answer to the upgrade of ${target}`));
    });
    const settle = () => {
      const text = buffered.toString('latin1');
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0);
      if (status !== 101) return { status };
      const end = buffered.indexOf('\r\n\r\n');
      if (end < 0) return undefined;
      const frame = buffered.subarray(end + 4);
      if (frame.length < 2) return undefined;
      let length = frame[1] & 0x7f;
      let offset = 2;
      if (length === 126) {
        if (frame.length < 4) return undefined;
        length = frame.readUInt16BE(2);
        offset = 4;
      }
      if (frame.length < offset + length) return undefined;
      return { status, path: (JSON.parse(frame.subarray(offset, offset + length).toString('utf8')) as { path: string }).path };
    };
    socket.on('data', (c: Buffer) => {
      buffered = Buffer.concat([buffered, c]);
      const result = settle();
      if (result) {
        socket.destroy();
        resolve(result);
      }
    });
    socket.on('close', () => resolve(settle() ?? { status: 0 }));
    socket.on('error', () => undefined);
    socket.write(`GET ${target} HTTP/1.1\r\nHost: ws.example\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n`, 'latin1');
  });
}

/** Every spelling below reaches `/admin…` on an upstream that decodes and resolves dot-segments. */
const DENIED: readonly { name: string; target: string }[] = [
  { name: 'plain', target: '/admin/secret' },
  { name: 'encoded first letter', target: '/%61dmin/secret' },
  { name: 'every letter encoded, mixed hex case', target: '/%61%64%6D%69%6e/secret' },
  { name: 'encoded dot-dot', target: '/public/%2e%2e/admin/secret' },
  { name: 'encoded dot-dot, uppercase', target: '/public/%2E%2E/admin/secret' },
  { name: 'half-encoded dot-dot', target: '/public/.%2e/admin' },
  { name: 'raw dot-dot', target: '/public/../admin/secret' },
  { name: 'dot-dot above the root', target: '/../../admin' },
  { name: 'leading double slash', target: '//admin/secret' },
  { name: 'many slashes', target: '///admin///secret' },
  { name: 'dot segment', target: '/./admin' },
  { name: 'encoded dot segment', target: '/%2e/admin' },
  { name: 'slashes and dots together', target: '/public//..//admin' },
];

const REFUSED: readonly { name: string; target: string }[] = [
  { name: 'encoded slash, lowercase', target: '/admin%2fsecret' },
  { name: 'encoded slash, uppercase', target: '/public%2F..%2Fadmin' },
  { name: 'raw backslash', target: '/\\admin' },
  { name: 'backslash dot-dot', target: '/public/..\\admin' },
  { name: 'encoded backslash', target: '/public/..%5Cadmin' },
  { name: 'encoded NUL', target: '/admin%00' },
  { name: 'bad percent-encoding', target: '/%zzadmin' },
];

describe('hostile paths, Host and idle sessions', () => {
  let upstream: RecordingUpstream;
  let other: RecordingUpstream;
  let ws: WebSocketEchoServer;
  let gw: HostileGateway;

  before(async () => {
    upstream = await startRecordingUpstream();
    other = await startRecordingUpstream();
    ws = await startWebSocketEcho('ws');
    const yaml = gatewayClass() + gateway('gw', [{ name: 'http', port: 65000 }]).replace('port: 65000', 'port: {{listener.port}}')
      + service('app', upstream) + service('other', other) + service('ws', ws)
      + route('app', 'app.example', 'app') + route('other', 'other.example', 'other') + route('ws', 'ws.example', 'ws')
      + routeTrafficPolicy('deny-app', 'app', DENY_ADMIN) + routeTrafficPolicy('deny-ws', 'ws', DENY_ADMIN)
      + frontendIdle(IDLE_MS);
    gw = await startHostileGateway(yaml);
  });
  after(async () => {
    await gw?.close();
    await upstream?.close();
    await other?.close();
    await ws?.close();
  });

  describe('HTTP/1.1', () => {
    for (const c of DENIED) {
      it(`denies ${c.name}: ${c.target}`, async () => assert.equal((await get(gw.port, c.target)).status, 403));
    }
    for (const c of REFUSED) {
      it(`refuses ${c.name}: ${c.target}`, async () => {
        const res = await get(gw.port, c.target);
        assert.equal(res.status, 400, res.text);
      });
    }
    it('keeps case distinct: /ADMIN is another path, passed as is', async () => {
      assert.equal((await get(gw.port, '/ADMIN/x')).status, 200);
      assert.equal(upstream.targets.at(-1), '/ADMIN/x');
    });
    const allowed = [
      { name: 'dot-segments, slashes and encodings resolved, query untouched', target: '/public/./docs//a/../%62?x=%2e%2e/../%2F&y=//', want: '/public/docs/b?x=%2e%2e/../%2F&y=//' },
      { name: 'reserved encodings kept, hex uppercased', target: '/files/a%3ab%c3%a9', want: '/files/a%3Ab%C3%A9' },
      { name: 'double encoding stays encoded once', target: '/%2561dmin', want: '/%2561dmin' },
      { name: 'trailing slash kept', target: '/public/x/', want: '/public/x/' },
    ];
    for (const c of allowed) {
      it(`forwards the canonical path: ${c.name}`, async () => {
        const res = await get(gw.port, c.target);
        assert.equal(res.status, 200, res.text);
        assert.equal(upstream.targets.at(-1), c.want);
      });
    }
  });

  describe('h2c', () => {
    for (const c of DENIED) {
      it(`denies ${c.name}: ${c.target}`, async () => assert.equal(await h2c(gw.port, c.target), 403));
    }
    for (const c of REFUSED.filter((r) => !r.target.includes('\\'))) {
      it(`refuses ${c.name}: ${c.target}`, async () => assert.equal(await h2c(gw.port, c.target), 400));
    }
    it('refuses a raw backslash', async () => assert.equal(await h2c(gw.port, '/\\admin'), 400));
    it('forwards the canonical path', async () => {
      assert.equal(await h2c(gw.port, '/public/%2e/x//y'), 200);
      assert.equal(upstream.targets.at(-1), '/public/x/y');
    });
  });

  describe('WebSocket upgrade', () => {
    for (const c of DENIED) {
      it(`denies ${c.name}: ${c.target}`, async () => assert.equal((await upgrade(gw.port, c.target)).status, 403));
    }
    for (const c of REFUSED) {
      it(`refuses ${c.name}: ${c.target}`, async () => assert.equal((await upgrade(gw.port, c.target)).status, 400));
    }
    it('upgrades an allowed path and the upstream sees it canonical', async () => {
      const res = await upgrade(gw.port, '/chat/./room//%37?x=%2e');
      assert.equal(res.status, 101);
      assert.equal(res.path, '/chat/room/7?x=%2e');
    });
  });

  it('no admin path ever reached an upstream, however it resolves the path', () => {
    assert.ok(upstream.targets.length > 0);
    for (const target of [...upstream.targets, ...other.targets]) {
      // What a lenient upstream makes of it: one decoding, slashes merged, dot-segments resolved.
      const resolved = new URL(decodeURIComponent(target.split('?')[0]).replace(/\/+/g, '/'), 'http://upstream').pathname;
      assert.ok(!resolved.startsWith('/admin'), `upstream saw ${target}`);
    }
  });

  describe('Host', () => {
    it('answers 400 to two Host headers', async () => {
      const res = await raw(gw.port, 'GET /x HTTP/1.1\r\nHost: app.example\r\nHost: other.example\r\nConnection: close\r\n\r\n');
      assert.equal(res.status, 400, res.text);
    });
    it('answers 400 to two Host headers on an upgrade', async () => {
      const res = await raw(gw.port, 'GET /x HTTP/1.1\r\nHost: ws.example\r\nhost: app.example\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n');
      assert.equal(res.status, 400, res.text);
    });
    it('answers 400 to an HTTP/1.1 request without Host', async () => {
      assert.equal((await raw(gw.port, 'GET /x HTTP/1.1\r\nConnection: close\r\n\r\n')).status, 400);
    });
    it('serves an HTTP/1.0 request without Host', async () => {
      const res = await raw(gw.port, 'GET /x HTTP/1.0\r\n\r\n');
      assert.notEqual(res.status, 400, res.text);
    });
    it('routes an absolute-form target by its own authority, not the Host header', async () => {
      const before = other.targets.length;
      const res = await raw(gw.port, 'GET http://other.example/a/../b HTTP/1.1\r\nHost: app.example\r\nConnection: close\r\n\r\n');
      assert.equal(res.status, 200, res.text);
      assert.equal(other.targets.length, before + 1);
      assert.equal(other.targets.at(-1), '/b');
      assert.equal(other.hosts.at(-1), 'other.example');
    });
    it('normalizes an absolute-form target before the Deny', async () => {
      const res = await raw(gw.port, 'GET http://app.example/%61dmin HTTP/1.1\r\nHost: other.example\r\nConnection: close\r\n\r\n');
      assert.equal(res.status, 403, res.text);
    });
    it('answers 400 to h2 with a host header that differs from :authority', async () => {
      assert.equal(await h2c(gw.port, '/x', { host: 'other.example' }), 400);
    });
    it('resets an h2 stream with two host headers (malformed, RFC 9113 §8.1.1)', async () => {
      const base = [[':method', 'GET'], [':scheme', 'http'], [':path', '/x'], [':authority', 'app.example']] as const;
      assert.equal(await rawH2(gw.port, [...base, ['host', 'app.example']]), 200);
      assert.equal(await rawH2(gw.port, [...base, ['host', 'app.example'], ['host', 'other.example']]), 'reset');
      assert.equal(await rawH2(gw.port, [...base, ['host', 'other.example']]), 400);
    });
    it('serves h2 with a host header equal to :authority', async () => {
      assert.equal(await h2c(gw.port, '/x', { host: 'APP.example' }), 200);
    });
  });

  describe('idle h2c sessions', () => {
    it(`closes a session with no open stream after the idle timeout (${IDLE_MS} ms)`, async () => {
      const session = http2.connect(`http://127.0.0.1:${gw.port}`);
      session.on('error', () => undefined);
      const closed = new Promise<number>((ok) => session.once('close', () => ok(performance.now())));
      let goaway = false;
      session.once('goaway', () => (goaway = true));
      await new Promise<void>((ok, fail) => {
        const stream = session.request({ ':path': '/x', ':authority': 'app.example' });
        stream.on('error', fail);
        stream.resume();
        stream.on('close', () => ok());
        stream.end();
      });
      const idleFrom = performance.now();
      const at = await Promise.race([closed, new Promise<number>((ok) => setTimeout(() => ok(-1), IDLE_MS * 4))]);
      session.destroy();
      assert.ok(at > 0, 'the idle session was not closed');
      assert.ok(goaway, 'no GOAWAY before the close');
      assert.ok(at - idleFrom >= IDLE_MS * 0.8, `closed after ${Math.round(at - idleFrom)} ms`);
    });
    it('keeps a session whose stream stays open longer than the idle timeout', async () => {
      const session = http2.connect(`http://127.0.0.1:${gw.port}`);
      session.on('error', () => undefined);
      let goaway = false;
      session.once('goaway', () => (goaway = true));
      try {
        // A POST whose body ends after the idle timeout: its stream is open all along.
        const stream = session.request({ ':method': 'POST', ':path': '/slow', ':authority': 'app.example' });
        const status = new Promise<number>((ok, fail) => {
          stream.on('response', (h) => ok(Number(h[':status'])));
          stream.on('error', fail);
        });
        const closed = new Promise<void>((ok) => stream.on('close', () => ok()));
        stream.resume();
        stream.write('a');
        await new Promise((ok) => setTimeout(ok, IDLE_MS * 1.5));
        assert.equal(goaway, false, 'GOAWAY while a stream was open');
        stream.end('b');
        await closed;
        assert.equal(await status, 200);
      } finally {
        session.destroy();
      }
    });
  });
});
