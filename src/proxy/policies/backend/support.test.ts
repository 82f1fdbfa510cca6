import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { BackendPolicy } from '../../../ir/policy.ts';
import { unsupportedMembers, unsupportedOn, type UpstreamKind } from './support.ts';

const extAuth: BackendPolicy = { extAuth: { url: 'http://authz' }, sources: {} } as BackendPolicy;
const cloudA: BackendPolicy = { auth: { cloudA: {} }, sources: {} };
const cloudB: BackendPolicy = { auth: { cloudB: {} }, sources: {} };
const cloudC: BackendPolicy = { auth: { cloudC: { type: 'IdToken' } }, sources: {} };

const rows: { name: string; kind: UpstreamKind; policy: BackendPolicy; want: string[] }[] = [
  { name: 'Service endpoints apply extAuth', kind: 'service', policy: extAuth, want: [] },
  { name: 'AI providers apply extAuth', kind: 'ai', policy: extAuth, want: [] },
  { name: 'MCP requests apply extAuth', kind: 'mcp', policy: extAuth, want: [] },
  ...(['service', 'ai', 'mcp'] as const).flatMap((kind) => [cloudA, cloudB, cloudC].map((policy) => ({
    name: `${kind} applies ${Object.keys(policy.auth ?? {})[0]}`, kind, policy, want: [] as string[],
  }))),
];

describe('unsupported backend members per upstream kind', () => {
  for (const row of rows) it(row.name, () => assert.deepEqual(unsupportedOn(row.kind, row.policy).map((u) => u.message), row.want));
  it('unsupportedMembers is the MCP list', () => assert.deepEqual(unsupportedMembers(extAuth), unsupportedOn('mcp', extAuth)));
  it('a gap in the table fails the request with the member named', () => {
    const table = { service: { members: [], auth: ['cloudB'] as const }, ai: { members: [], auth: [] }, mcp: { members: ['extAuth'] as const, auth: [] } };
    assert.deepEqual(unsupportedOn('service', cloudB, table).map((u) => u.message), ['backend auth cloudB is not supported yet']);
    assert.deepEqual(unsupportedOn('mcp', extAuth, table).map((u) => u.member), ['extAuth']);
    assert.deepEqual(unsupportedOn('service', cloudA, table), []);
  });
});
