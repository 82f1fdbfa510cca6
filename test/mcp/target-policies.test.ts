import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { createCertificate } from '../support/certs.ts';
import { startGateway, type GatewayHarness } from '../support/gateway.ts';
import { httpGateway } from '../support/manifests.ts';
import { startKeyedFixture, type KeyedFixture, type SeenRequest } from './fixtures/keyed-server.ts';
import { connect, connectSse } from './support.ts';

/**
 * Backend policies of MCP targets through a listening gateway: two SDK-built upstream servers,
 * one of which demands `Authorization: Bearer <key>`, reached with the key configured once inline
 * on the target and once by a ProxyPolicy whose targetRefs sectionName names the target; the
 * other target must never see it. Every kind of upstream request (initialize and lists, tool
 * calls, the GET stream, DELETE, legacy SSE GET + message POSTs, Stateless per-request sessions)
 * carries the credential. An HTTPS target is verified with a CA from a Secret (and a fixed SNI).
 */
const KEY = 'k-123';
const SECURE_KEY = 's-456';
const SECURE_NAME = 'mcp.secure.test';

function manifests(keyed: KeyedFixture, open: KeyedFixture, secure: KeyedFixture, caPem: string): string {
  const target = (name: string, f: KeyedFixture, extra = '') => `      - name: ${name}\n        static:\n          host: 127.0.0.1\n          port: ${f.port}\n${extra}`;
  const keyInline = '          policies:\n            auth: { secretRef: { name: keyed-key } }\n';
  const backend = (name: string, targets: string, more = '') => `---
apiVersion: switchboard.dev/v1alpha1
kind: ProxyBackend
metadata: { name: ${name} }
spec:
  mcp:
${more}    targets:
${targets}`;
  const rule = (name: string) => `    - matches: [{ path: { type: PathPrefix, value: /${name} } }]\n      backendRefs: [{ group: switchboard.dev, kind: ProxyBackend, name: ${name} }]\n`;
  const names = ['inline', 'section', 'stateless', 'sseup', 'secure', 'nokey', 'noca', 'unsupported'];
  return `${httpGateway()}---
apiVersion: v1
kind: Secret
metadata: { name: keyed-key }
stringData:
  Authorization: Bearer ${KEY}
---
apiVersion: v1
kind: Secret
metadata: { name: secure-ca }
stringData:
  ca.crt: ${JSON.stringify(caPem)}
${backend('inline', target('keyed', keyed, keyInline) + target('open', open))}
${backend('section', target('keyed', keyed) + target('open', open))}
---
apiVersion: switchboard.dev/v1alpha1
kind: ProxyPolicy
metadata: { name: section-key }
spec:
  targetRefs: [{ group: switchboard.dev, kind: ProxyBackend, name: section, sectionName: keyed }]
  backend:
    auth: { key: ${KEY} }
${backend('stateless', target('keyed', keyed, keyInline) + target('open', open), '    sessionRouting: Stateless\n')}
${backend('sseup', target('keyed', keyed, `          protocol: SSE\n${keyInline}`) + target('open', open))}
${backend('secure', target('secure', secure, `          policies:
            tls: { caCertificateRefs: [{ kind: Secret, name: secure-ca }], sni: ${SECURE_NAME} }
            auth: { key: ${SECURE_KEY}, location: { header: { name: X-Api-Key } } }
`) + target('open', open))}
${backend('nokey', target('keyed', keyed) + target('open', open))}
${backend('noca', target('secure', secure, `          policies:
            tls: { sni: ${SECURE_NAME} }
            auth: { key: ${SECURE_KEY}, location: { header: { name: X-Api-Key } } }
`))}
${backend('unsupported', target('keyed', keyed, '          policies:\n            auth: { cloudB: { secretRef: { name: keyed-key } } }\n') + target('open', open), '    failureMode: FailOpen\n')}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: mcp }
spec:
  parentRefs: [{ name: gw }]
  rules:
${names.map(rule).join('')}`;
}

function text(result: unknown): string {
  const content = (result as { content?: { type: string; text?: string }[] }).content ?? [];
  return content.map((c) => c.text ?? '').join('');
}

/** Waits (bounded) until the fixture has seen a request matching `match`. */
async function seenEventually(f: KeyedFixture, from: number, match: (s: SeenRequest) => boolean): Promise<void> {
  for (let i = 0; i < 50 && !f.seen.slice(from).some(match); i++) await delay(20);
  assert.ok(f.seen.slice(from).some(match), `expected a matching request; saw ${JSON.stringify(f.seen.slice(from))}`);
}

describe('MCP target backend policies through a listening gateway', () => {
  let keyed: KeyedFixture;
  let open: KeyedFixture;
  let secure: KeyedFixture;
  let gw: GatewayHarness;
  const clients: Client[] = [];
  const url = (path: string) => gw.url(80, `/${path}`);

  before(async () => {
    const cert = await createCertificate([SECURE_NAME]);
    [keyed, open, secure] = await Promise.all([
      startKeyedFixture('keyed', { require: { header: 'authorization', value: `Bearer ${KEY}` } }),
      startKeyedFixture('open'),
      startKeyedFixture('secure', { tls: cert, require: { header: 'x-api-key', value: SECURE_KEY } }),
    ]);
    gw = await startGateway(manifests(keyed, open, secure, cert.certPem));
  });
  after(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    await gw?.close();
    await Promise.all([keyed?.stop(), open?.stop(), secure?.stop()]);
  });

  it('translates every backend as accepted and applies cleanly', () => {
    assert.deepEqual(gw.applyErrors, []);
    for (const name of ['inline', 'section', 'stateless', 'sseup', 'secure', 'nokey', 'noca', 'unsupported']) {
      const conditions = gw.statusOf('ProxyBackend', name).conditions as { type: string; status: string; message: string }[];
      assert.equal(conditions.find((c) => c.type === 'Accepted')?.status, 'True', `${name}: ${JSON.stringify(conditions)}`);
    }
  });

  const keyedCases = [
    { name: 'inline policies on the target (Streamable HTTP: POSTs, the GET stream, DELETE)', path: 'inline' },
    { name: 'a ProxyPolicy with targetRefs sectionName = the target name', path: 'section' },
  ];
  for (const c of keyedCases) {
    it(c.name, async () => {
      const [k, o] = [keyed.seen.length, open.seen.length];
      const { client, transport } = await connect(url(c.path));
      clients.push(client);
      const tools = await client.listTools();
      assert.deepEqual(tools.tools.map((t) => t.name).sort(), ['keyed_whoami', 'open_whoami']);
      assert.equal(text(await client.callTool({ name: 'keyed_whoami', arguments: {} })), 'keyed');
      assert.equal(text(await client.callTool({ name: 'open_whoami', arguments: {} })), 'open');
      await seenEventually(keyed, k, (s) => s.method === 'GET');
      await transport.terminateSession();
      await seenEventually(keyed, k, (s) => s.method === 'DELETE');
      const toKeyed = keyed.seen.slice(k);
      assert.deepEqual([...new Set(toKeyed.map((s) => s.method))].sort(), ['DELETE', 'GET', 'POST']);
      assert.deepEqual(toKeyed.filter((s) => s.credential !== `Bearer ${KEY}` || s.status !== 200), [], 'every request to the keyed target carried the key');
      assert.ok(open.seen.length > o);
      assert.deepEqual(open.seen.slice(o).filter((s) => s.credential !== undefined), [], 'the other target never sees the key');
    });
  }

  it('a legacy HTTP+SSE client: the upstream sessions it opens carry the key', async () => {
    const k = keyed.seen.length;
    const client = await connectSse(url('inline'));
    clients.push(client);
    assert.equal(text(await client.callTool({ name: 'keyed_whoami', arguments: {} })), 'keyed');
    await client.close();
    assert.ok(keyed.seen.length > k);
    assert.deepEqual(keyed.seen.slice(k).filter((s) => s.credential !== `Bearer ${KEY}`), []);
  });

  it('a legacy SSE target: the GET stream and every message POST carry the key', async () => {
    const k = keyed.seen.length;
    const { client } = await connect(url('sseup'));
    clients.push(client);
    assert.equal(text(await client.callTool({ name: 'keyed_whoami', arguments: {} })), 'keyed');
    const toKeyed = keyed.seen.slice(k);
    assert.ok(toKeyed.some((s) => s.method === 'GET' && s.path === '/sse'));
    assert.ok(toKeyed.some((s) => s.method === 'POST' && s.path === '/messages'));
    assert.deepEqual(toKeyed.filter((s) => s.credential !== `Bearer ${KEY}` || s.status !== 200), []);
  });

  it('Stateless: the per-request upstream sessions carry the key', async () => {
    const k = keyed.seen.length;
    const { client } = await connect(url('stateless'));
    clients.push(client);
    assert.equal(text(await client.callTool({ name: 'keyed_whoami', arguments: {} })), 'keyed');
    const toKeyed = keyed.seen.slice(k);
    assert.ok(toKeyed.filter((s) => s.method === 'POST').length >= 4, 'initialize + initialized per request, twice at least');
    assert.deepEqual(toKeyed.filter((s) => s.credential !== `Bearer ${KEY}` || s.status !== 200), []);
  });

  it('an HTTPS target verified with a CA from a Secret (fixed SNI), key in a custom header', async () => {
    const s = secure.seen.length;
    const { client } = await connect(url('secure'));
    clients.push(client);
    assert.equal(text(await client.callTool({ name: 'secure_whoami', arguments: {} })), 'secure');
    assert.ok(secure.seen.length > s);
    assert.deepEqual(secure.seen.slice(s).filter((t) => t.credential !== SECURE_KEY || t.status !== 200), []);
  });

  const refusals = [
    { name: 'a target demanding a key, without a policy: FailClosed fails the session', path: 'nokey', fixture: () => keyed, reached: true },
    { name: 'an HTTPS target whose CA is not trusted (system CAs): never reached', path: 'noca', fixture: () => secure, reached: false },
  ];
  for (const c of refusals) {
    it(c.name, async () => {
      const f = c.fixture();
      const before = f.seen.length;
      await assert.rejects(connect(url(c.path)), /unavailable|MCP target/);
      if (c.reached) assert.ok(f.seen.slice(before).every((s) => s.status === 401) && f.seen.length > before);
      else assert.equal(f.seen.length, before, 'the TLS handshake failed before any HTTP request');
    });
  }

  it('a target credential that cannot work (a cloud-B Secret without client credentials) fails that target (FailOpen serves the others); nothing is sent to it', async () => {
    const k = keyed.seen.length;
    const { client } = await connect(url('unsupported'));
    clients.push(client);
    const tools = await client.listTools();
    assert.deepEqual(tools.tools.map((t) => t.name), ['open_whoami']);
    assert.equal(keyed.seen.length, k, 'no unauthenticated request reached the target');
  });
});
