import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { McpTargetIR } from '../../../ir/mcp.ts';
import type { BackendPolicy } from '../../../ir/policy.ts';
import type { PolicyContext } from '../../policies/context.ts';
import { compileTargetAccess, targetPolicy } from './policy.ts';

const base: McpTargetIR = { name: 'docs', host: 'mcp.example.com', port: 443, path: '/mcp', protocol: 'StreamableHTTP' };
const route = (auth: string, extra: Partial<BackendPolicy> = {}): BackendPolicy => ({ auth: { key: auth }, sources: { auth: ['route'] }, ...extra });

describe('targetPolicy: looks the translator-merged policy up, never merges', () => {
  const section = { auth: { key: 's' }, sources: { auth: ['section'] } };
  const cases: { name: string; backend?: BackendPolicy; target?: Partial<McpTargetIR>; expected: Partial<BackendPolicy> | undefined }[] = [
    { name: 'nothing anywhere', expected: undefined },
    { name: 'no route policy: the target\'s own policies', target: { policies: { auth: { key: 'i' }, sources: { auth: ['inline'] } } }, expected: { auth: { key: 'i' }, sources: { auth: ['inline'] } } },
    { name: 'the route policy alone', backend: route('r'), expected: { auth: { key: 'r' }, sources: { auth: ['route'] } } },
    { name: 'the target\'s sub-backend policy is complete: taken as it is', backend: route('r', { tls: { sni: 'r' }, subBackends: { docs: section } }), expected: section },
    { name: 'another target\'s sub-backend policy does not apply (and subBackends is not passed on)', backend: route('r', { subBackends: { other: section } }), expected: { auth: { key: 'r' }, sources: { auth: ['route'] } } },
    {
      name: 'with a route policy the target\'s inline policies are not merged again (the translator did)',
      backend: route('r'),
      target: { policies: { auth: { key: 'i' }, sources: { auth: ['inline'] } } },
      expected: { auth: { key: 'r' }, sources: { auth: ['route'] } },
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      assert.deepEqual(targetPolicy(c.backend, { ...base, ...c.target }), c.expected);
    });
  }
});

describe('compileTargetAccess', () => {
  const ctx = { identity: { passthroughToken: 'client-jwt' } } as unknown as PolicyContext;
  const written: { name: string; policy: BackendPolicy; headers: Record<string, string>; path: string }[] = [
    { name: 'key at the default location (Authorization: Bearer)', policy: { auth: { key: 'k1' }, sources: {} }, headers: { accept: 'x', authorization: 'Bearer k1' }, path: '/mcp' },
    {
      name: 'key in a header without prefix, extra credential in the query and a cookie',
      policy: {
        auth: {
          key: 'k2', location: { header: { name: 'X-Api-Key' } },
          credentials: [{ location: { queryParameter: { name: 'token' } }, value: 'q' }, { location: { cookie: { name: 'sid' } }, value: 'c v' }],
        },
        sources: {},
      },
      headers: { accept: 'x', 'x-api-key': 'k2', cookie: 'sid=c%20v' },
      path: '/mcp?token=q',
    },
    { name: 'passthrough re-adds the client token', policy: { auth: { passthrough: {} }, sources: {} }, headers: { accept: 'x', authorization: 'Bearer client-jwt' }, path: '/mcp' },
  ];
  for (const c of written) {
    it(`writes credentials: ${c.name}`, async () => {
      const access = compileTargetAccess(c.policy);
      assert.equal(access.failure, undefined);
      assert.deepEqual(await access.prepare({ accept: 'x' }, '/mcp', ctx), { headers: c.headers, path: c.path });
    });
  }

  it('passthrough without a validated client token writes nothing', async () => {
    const access = compileTargetAccess({ auth: { passthrough: {} }, sources: {} });
    assert.deepEqual(await access.prepare({ accept: 'x' }, '/mcp', undefined), { headers: { accept: 'x' }, path: '/mcp' });
  });

  const failing: { name: string; policy: BackendPolicy; reason: RegExp }[] = [
    { name: 'crossAppAccess without its endpoints', policy: { auth: { crossAppAccess: {} as never /* malformed on purpose: no endpoints */ }, sources: {} }, reason: /crossAppAccess needs identityProvider and resourceAuthorizationServer/ },
    { name: 'an extraction-only location', policy: { auth: { key: 'k', location: { expression: 'request.headers.x' } }, sources: {} }, reason: /auth.location must be a header, query parameter or cookie/ },
    { name: 'an invalid policy', policy: { invalid: [{ source: 'ProxyPolicy/default/p', message: 'Secret default/k not found' }], sources: {} }, reason: /ProxyPolicy\/default\/p: Secret default\/k not found/ },
  ];
  for (const c of failing) {
    it(`fails the target: ${c.name}`, () => assert.match(compileTargetAccess(c.policy).failure ?? '', c.reason));
  }

  it('cloudA auth signs the target request with SigV4 over its method, Host and body; without them nothing is signed', async () => {
    const access = compileTargetAccess({ auth: { cloudA: { secret: { accessKey: 'AKIDEXAMPLE', secretKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY' }, serviceName: 'execute-api', region: 'eu-west-1' } }, sources: {} });
    assert.equal(access.failure, undefined);
    assert.equal(access.needsCall, true);
    const out = await access.prepare({ 'content-type': 'application/json' }, '/mcp', undefined, { method: 'POST', host: 'tools.example', body: Buffer.from('{}') });
    assert.match(String(out.headers.authorization), /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/eu-west-1\/execute-api\/aws4_request, SignedHeaders=content-length;content-type;host;x-amz-content-sha256;x-amz-date, Signature=[0-9a-f]{64}$/);
    await assert.rejects(Promise.resolve(access.prepare({}, '/mcp', undefined)), /cloud credentials need the upstream request/);
  });

  it('connection settings: tls makes a fingerprinted setting; requestTimeout becomes timeoutMs', () => {
    const access = compileTargetAccess({ tls: { sni: 'a.example' }, http: { requestTimeoutMs: 1500 }, sources: {} });
    assert.equal(access.settings?.tls?.sni, 'a.example');
    assert.equal(access.timeoutMs, 1500);
    assert.notEqual(access.settings?.fingerprint, compileTargetAccess({ tls: { sni: 'b.example' }, sources: {} }).settings?.fingerprint);
    assert.equal(compileTargetAccess({ auth: { key: 'k' }, sources: {} }).settings, undefined);
  });
});
