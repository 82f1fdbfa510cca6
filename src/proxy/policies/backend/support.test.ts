import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { BackendPolicy } from '../../../ir/policy.ts';
import { unsupportedMembers, unsupportedOn, type UpstreamKind } from './support.ts';

const extAuth: BackendPolicy = { extAuth: { url: 'http://authz' }, sources: {} } as BackendPolicy;
const cloudA: BackendPolicy = { auth: { cloudA: {} }, sources: {} } as BackendPolicy;

const rows: { name: string; kind: UpstreamKind; policy: BackendPolicy; want: string[] }[] = [
  { name: 'Service endpoints apply extAuth', kind: 'service', policy: extAuth, want: [] },
  { name: 'AI providers apply extAuth', kind: 'ai', policy: extAuth, want: [] },
  { name: 'MCP requests apply extAuth', kind: 'mcp', policy: extAuth, want: [] },
  { name: 'cloud signing exists only for AI providers', kind: 'ai', policy: cloudA, want: [] },
  { name: 'cloud signing on a Service backend fails closed', kind: 'service', policy: cloudA, want: ['backend auth cloudA is not supported yet'] },
];

describe('unsupported backend members per upstream kind', () => {
  for (const row of rows) it(row.name, () => assert.deepEqual(unsupportedOn(row.kind, row.policy).map((u) => u.message), row.want));
  it('unsupportedMembers is the MCP list', () => assert.deepEqual(unsupportedMembers(extAuth), unsupportedOn('mcp', extAuth)));
});
