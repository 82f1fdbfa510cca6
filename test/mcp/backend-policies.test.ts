import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { startGateway, type GatewayHarness } from '../support/gateway.ts';
import { httpGateway } from '../support/manifests.ts';
import { startKeyedFixture, type KeyedFixture } from './fixtures/keyed-server.ts';
import { closedPort, connect } from './support.ts';

/**
 * ProxyPolicy `backend` members on MCP ProxyBackends, through a listening gateway and the MCP
 * SDK client: `backend.mcp.authorization` attaches like the inline `policies.mcp` (whole backend
 * or one target by sectionName, with SPEC.md's precedence: policy object < the backend's inline
 * policies < the target's), and a backend policy the gateway cannot apply (extAuth with its
 * service down, a missing Secret) refuses the request with a JSON-RPC error before any target is
 * contacted. Every backend has two SDK-built targets `a` and `b`, each serving one tool `whoami`
 * (exposed as `a_whoami`, `b_whoami`).
 */
const ONLY_A = 'mcp.tool.target == "a"';
const ONLY_B = 'mcp.tool.target == "b"';
const ANY_WHOAMI = 'mcp.tool.name == "whoami"';
const NOTHING = 'mcp.tool.name == "no-such-tool"';

const authorization = (expression: string) => `mcp: { authorization: { action: Allow, policy: { matchExpressions: ['${expression}'] } } }`;

interface Row {
  readonly name: string;
  /** ProxyBackend (and route path) name. */
  readonly backend: string;
  /** The backend's inline `spec.policies` members, one line of flow YAML. */
  readonly inline?: string;
  /** ProxyPolicies on this backend: `sectionName` (a target) or the whole backend, and the `backend` members. */
  readonly policies: readonly { readonly section?: string; readonly backend: string }[];
  readonly listed: readonly string[];
}

/** Which tools the client sees (and may call); the others are refused as unknown. */
const authorizationRows: readonly Row[] = [
  { name: 'a ProxyPolicy backend.mcp.authorization on the ProxyBackend filters tools/list and refuses the denied call', backend: 'policy', policies: [{ backend: authorization(ONLY_A) }], listed: ['a_whoami'] },
  { name: 'the same with targetRefs sectionName: only that target is filtered', backend: 'section', policies: [{ section: 'b', backend: authorization(NOTHING) }], listed: ['a_whoami'] },
  { name: 'precedence: the inline policies.mcp beats a policy object on the backend', backend: 'inline-wins', inline: authorization(ONLY_B), policies: [{ backend: authorization(ONLY_A) }], listed: ['b_whoami'] },
  { name: 'precedence: a sectionName policy beats the backend-wide policy object for its target', backend: 'section-wins', policies: [{ backend: authorization(NOTHING) }, { section: 'b', backend: authorization(ANY_WHOAMI) }], listed: ['b_whoami'] },
  { name: 'precedence: the inline policies.mcp beats a sectionName policy object', backend: 'inline-over-section', inline: authorization(ONLY_A), policies: [{ section: 'b', backend: authorization(ANY_WHOAMI) }], listed: ['a_whoami'] },
];

/** What a refusal carries: HTTP status, JSON-RPC code and docs/errors.md code in `data`. */
interface Refused { readonly refused: { readonly status: number; readonly rpc: number; readonly code: string } }
const POLICY_INVALID = { status: 500, rpc: -32603, code: 'policy_invalid' };

/** Backend policies that refuse every request: the client gets a JSON-RPC error, no target sees anything. */
const refusalRows = (dead: number): readonly (Omit<Row, 'listed'> & Refused)[] => [
  { name: 'extAuth FailClosed whose service is down', backend: 'extauth-down', policies: [{ backend: `extAuth: { url: "http://127.0.0.1:${dead}", failureMode: FailClosed }` }], refused: { status: 403, rpc: -32001, code: 'ext_auth_unavailable' } },
  { name: 'a ProxyPolicy auth.secretRef naming a missing Secret', backend: 'policy-secret', policies: [{ backend: 'auth: { secretRef: { name: no-such-secret } }' }], refused: POLICY_INVALID },
  { name: 'an inline auth.secretRef naming a missing Secret', backend: 'inline-secret', inline: 'auth: { secretRef: { name: no-such-secret } }', policies: [], refused: POLICY_INVALID },
];

function manifests(a: KeyedFixture, b: KeyedFixture, rows: readonly Omit<Row, 'listed'>[]): string {
  const target = (name: string, f: KeyedFixture) => `      - name: ${name}\n        static: { host: 127.0.0.1, port: ${f.port} }\n`;
  const docs = rows.map((row) => {
    const backend = `---
apiVersion: switchboard.dev/v1alpha1
kind: ProxyBackend
metadata: { name: ${row.backend} }
spec:
  mcp:
    targets:
${target('a', a)}${target('b', b)}${row.inline ? `  policies: { ${row.inline} }\n` : ''}`;
    const policies = row.policies.map((p, i) => `---
apiVersion: switchboard.dev/v1alpha1
kind: ProxyPolicy
metadata: { name: ${row.backend}-${i} }
spec:
  targetRefs: [{ group: switchboard.dev, kind: ProxyBackend, name: ${row.backend}${p.section ? `, sectionName: ${p.section}` : ''} }]
  backend: { ${p.backend} }
`);
    return backend + policies.join('');
  });
  const rules = rows.map((row) => `    - matches: [{ path: { type: PathPrefix, value: /${row.backend} } }]\n      backendRefs: [{ group: switchboard.dev, kind: ProxyBackend, name: ${row.backend} }]\n`);
  return `${httpGateway()}${docs.join('')}---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: mcp }
spec:
  parentRefs: [{ name: gw }]
  rules:
${rules.join('')}`;
}

const INITIALIZE = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } };

describe('ProxyPolicy backend members on MCP backends', () => {
  let a: KeyedFixture;
  let b: KeyedFixture;
  let gw: GatewayHarness;
  let refusals: readonly Omit<Row, 'listed'>[];
  const clients: Client[] = [];
  const url = (path: string) => gw.url(80, `/${path}`);

  before(async () => {
    [a, b] = await Promise.all([startKeyedFixture('a'), startKeyedFixture('b')]);
    refusals = refusalRows(await closedPort());
    gw = await startGateway(manifests(a, b, [...authorizationRows, ...refusals]));
  });
  after(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    await gw?.close();
    await Promise.all([a?.stop(), b?.stop()]);
  });

  for (const row of authorizationRows) {
    it(row.name, async () => {
      const { client } = await connect(url(row.backend));
      clients.push(client);
      const listed = (await client.listTools()).tools.map((t) => t.name).sort();
      assert.deepEqual(listed, [...row.listed]);
      for (const tool of listed) {
        const result = await client.callTool({ name: tool, arguments: {} });
        assert.deepEqual(result.content, [{ type: 'text', text: tool.slice(0, 1) }]);
      }
      for (const denied of ['a_whoami', 'b_whoami'].filter((t) => !row.listed.includes(t))) {
        const fixture = denied.startsWith('a') ? a : b;
        const before = fixture.seen.length;
        await assert.rejects(client.callTool({ name: denied, arguments: {} }), (err: Error & { code?: number }) => {
          assert.equal(err.code, -32602, err.message);
          assert.match(err.message, /Unknown tool/);
          return true;
        });
        assert.equal(fixture.seen.length, before, `the denied call never reached target ${denied.slice(0, 1)}`);
      }
    });
  }

  const refusalNames = refusalRows(0).map((r) => r.name);
  for (const [i, name] of refusalNames.entries()) {
    it(`refused, nothing sent to any target: ${name}`, async () => {
      const row = refusals[i];
      const seen = [a.seen.length, b.seen.length];
      const res = await fetch(url(row.backend), { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: JSON.stringify(INITIALIZE) });
      const want = refusalRows(0)[i].refused;
      assert.equal(res.status, want.status);
      const body = await res.json() as { jsonrpc?: string; error?: { code?: number; message?: string; data?: { status?: number; code?: string } } };
      assert.equal(body.jsonrpc, '2.0');
      assert.equal(body.error?.code, want.rpc);
      assert.deepEqual(body.error?.data, { status: want.status, code: want.code });
      await assert.rejects(connect(url(row.backend)), 'the SDK client cannot connect');
      assert.deepEqual([a.seen.length, b.seen.length], seen, 'no target was contacted');
    });
  }
});
