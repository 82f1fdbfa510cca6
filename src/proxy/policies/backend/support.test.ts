import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { BackendPolicy } from '../../../ir/policy.ts';
import { unsupportedMembers, unsupportedOn, type UpstreamKind } from './support.ts';

const extAuth: BackendPolicy = { extAuth: { url: 'http://authz' }, sources: {} } as BackendPolicy;
const cloudA: BackendPolicy = { auth: { cloudA: { serviceName: 'execute-api' } }, sources: {} };
const cloudB: BackendPolicy = { auth: { cloudB: {} }, sources: {} };
const cloudC: BackendPolicy = { auth: { cloudC: { type: 'IdToken' } }, sources: {} };

const rows: { name: string; kind: UpstreamKind; policy: BackendPolicy; want: string[] }[] = [
  { name: 'Service endpoints apply extAuth', kind: 'service', policy: extAuth, want: [] },
  { name: 'AI providers apply extAuth', kind: 'ai', policy: extAuth, want: [] },
  { name: 'MCP requests apply extAuth', kind: 'mcp', policy: extAuth, want: [] },
  ...(['service', 'ai', 'mcp'] as const).flatMap((kind) => [cloudA, cloudB, cloudC].map((policy) => ({
    name: `${kind} applies ${Object.keys(policy.auth ?? {})[0]}`, kind, policy, want: [] as string[],
  }))),
  { name: 'an agent runtime applies extAuth and cloudA', kind: 'agentRuntime', policy: { ...extAuth, auth: { cloudA: {} } }, want: [] },
  { name: 'an agent runtime refuses cloudB (SigV4 or its inbound authorizer\'s bearer only)', kind: 'agentRuntime', policy: cloudB, want: ['backend auth cloudB is not supported yet'] },
  { name: 'an agent runtime refuses cloudC', kind: 'agentRuntime', policy: cloudC, want: ['backend auth cloudC is not supported yet'] },
];

const SERVICE_ACCOUNT = JSON.stringify({ type: 'service_account', client_email: 'gw@p.iam.gserviceaccount.com', private_key: '-----BEGIN PRIVATE KEY-----\n-----END PRIVATE KEY-----\n' });
const unusable: { name: string; kind: UpstreamKind; auth: BackendPolicy['auth']; want: RegExp[] }[] = [
  { name: 'cloudA without serviceName on a Service backend', kind: 'service', auth: { cloudA: { region: 'eu-west-1' } }, want: [/auth.cloudA needs serviceName/] },
  { name: 'cloudA without serviceName on an MCP target', kind: 'mcp', auth: { cloudA: {} }, want: [/auth.cloudA needs serviceName/] },
  { name: 'cloudA without serviceName on an AI provider (the provider names it)', kind: 'ai', auth: { cloudA: {} }, want: [] },
  { name: 'cloudA without serviceName on an agent runtime (bedrock-agentcore)', kind: 'agentRuntime', auth: { cloudA: {} }, want: [] },
  { name: 'cloudA with serviceName', kind: 'service', auth: { cloudA: { serviceName: 'execute-api' } }, want: [] },
  { name: 'cloudB Secret without clientSecret', kind: 'ai', auth: { cloudB: { secret: { clientID: 'a', tenantID: 't' } } }, want: [/needs clientID, tenantID and clientSecret/] },
  { name: 'cloudB Secret complete', kind: 'service', auth: { cloudB: { secret: { clientID: 'a', tenantID: 't', clientSecret: 's' } } }, want: [] },
  { name: 'cloudB without a Secret (ambient identity)', kind: 'mcp', auth: { cloudB: { workloadIdentity: {} } }, want: [] },
  { name: 'cloudC Secret that is not JSON', kind: 'service', auth: { cloudC: { secret: 'nope' } }, want: [/not JSON/] },
  { name: 'cloudC Secret without a private key', kind: 'mcp', auth: { cloudC: { secret: '{"client_email":"x"}' } }, want: [/client_email and private_key/] },
  { name: 'cloudC service account key', kind: 'service', auth: { cloudC: { secret: SERVICE_ACCOUNT } }, want: [] },
  { name: 'cloudC ambient (no Secret)', kind: 'service', auth: { cloudC: { type: 'IdToken' } }, want: [] },
];

describe('cloud credentials that cannot work are refused when compiled', () => {
  for (const row of unusable) {
    it(row.name, () => {
      const got = unsupportedOn(row.kind, { auth: row.auth, sources: {} });
      assert.equal(got.length, row.want.length, JSON.stringify(got));
      got.forEach((u, i) => {
        assert.equal(u.member, 'auth');
        assert.match(u.message, row.want[i]);
      });
    });
  }
});

describe('unsupported backend members per upstream kind', () => {
  for (const row of rows) it(row.name, () => assert.deepEqual(unsupportedOn(row.kind, row.policy).map((u) => u.message), row.want));
  it('unsupportedMembers is the MCP list', () => assert.deepEqual(unsupportedMembers(extAuth), unsupportedOn('mcp', extAuth)));
  it('a gap in the table fails the request with the member named', () => {
    const table = { service: { members: [], auth: ['cloudB'] as const }, ai: { members: [], auth: [] }, mcp: { members: ['extAuth'] as const, auth: [] }, agentRuntime: { members: [], auth: [] } };
    assert.deepEqual(unsupportedOn('service', cloudB, table).map((u) => u.message), ['backend auth cloudB is not supported yet']);
    assert.deepEqual(unsupportedOn('mcp', extAuth, table).map((u) => u.member), ['extAuth']);
    assert.deepEqual(unsupportedOn('service', cloudA, table), []);
  });
});
