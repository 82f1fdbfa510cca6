import assert from 'node:assert/strict';
import type { IncomingHttpHeaders } from 'node:http';
import { describe, it } from 'node:test';
import { silentLogger } from '../../../../common/logger.ts';
import type { AuthorizationAction, AuthorizationPolicy } from '../../../../ir/policy.ts';
import type { RequestIdentity } from '../../context.ts';
import { testContext } from '../../../testing/credential-context.ts';
import { compileAuthorization } from './authorization.ts';

type Rule = [AuthorizationAction, ...string[]];

function step(rules: Rule[]) {
  const member: AuthorizationPolicy = { rules: rules.map(([action, ...matchExpressions]) => ({ action, matchExpressions, source: 'ProxyPolicy/default/p' })) };
  return compileAuthorization(member, { logger: silentLogger, policy: { sources: {}, authorization: member } });
}

const admin: RequestIdentity = { jwt: { claims: { sub: 'alice', groups: ['admin'], tier: 2 }, token: 't' } };
const keyed: RequestIdentity = { apiKey: { name: 'ci', metadata: { group: 'eng' } } };

const cases: { name: string; rules: Rule[]; identity?: RequestIdentity; headers?: IncomingHttpHeaders; method?: string; allowed: boolean }[] = [
  { name: 'no rules allow', rules: [], allowed: true },
  { name: 'a matching Allow allows', rules: [['Allow', 'jwt.sub == "alice"']], identity: admin, allowed: true },
  { name: 'Allow rules exist and none matches', rules: [['Allow', 'jwt.sub == "bob"'], ['Allow', 'request.method == "POST"']], identity: admin, allowed: false },
  { name: 'any of several Allow rules', rules: [['Allow', 'jwt.sub == "bob"'], ['Allow', 'request.method == "GET"']], identity: admin, allowed: true },
  { name: 'all expressions of a rule must hold', rules: [['Allow', 'jwt.sub == "alice"', 'request.method == "POST"']], identity: admin, allowed: false },
  { name: 'a failing Allow does not allow (no jwt)', rules: [['Allow', 'jwt.sub == "alice"']], allowed: false },
  { name: 'a matching Deny denies despite an Allow', rules: [['Allow', 'true'], ['Deny', '"admin" in jwt.groups']], identity: admin, allowed: false },
  { name: 'a non-matching Deny alone allows', rules: [['Deny', 'request.headers["x-block"] == "1"']], headers: { 'x-block': '0' }, allowed: true },
  { name: 'a failing Deny does not deny', rules: [['Deny', 'request.headers["x-block"] == "1"']], allowed: true },
  { name: 'a met Require allows', rules: [['Require', 'jwt.tier >= 2']], identity: admin, allowed: true },
  { name: 'an unmet Require denies even with a matching Allow', rules: [['Allow', 'true'], ['Require', 'jwt.tier >= 3']], identity: admin, allowed: false },
  { name: 'a failing Require denies', rules: [['Require', 'jwt.tier >= 1']], allowed: false },
  { name: 'apiKey metadata fields', rules: [['Allow', 'apiKey.group == "eng" && apiKey.name == "ci"']], identity: keyed, allowed: true },
  { name: 'Require that a credential was presented', rules: [['Require', 'has(jwt.sub) || has(apiKey.name)']], identity: keyed, allowed: true },
  { name: 'Require without any credential', rules: [['Require', 'has(jwt.sub) || has(apiKey.name)']], allowed: false },
];

describe('authorization', () => {
  for (const c of cases) {
    it(c.name, async () => {
      const result = await step(c.rules).onRequest(testContext({ identity: c.identity, headers: c.headers, method: c.method }));
      if (c.allowed) assert.equal(result.action, 'continue');
      else {
        assert.ok(result.action === 'respond');
        assert.equal(result.response.status, 403);
        assert.match(String(result.response.body), /"code":"forbidden"/);
      }
    });
  }

  it('buffers the body for rules that read it', async () => {
    const s = step([['Allow', 'json(request.body).model == "small"']]);
    const ok = s.onRequest(testContext({ method: 'POST', body: '{"model":"small"}' }));
    assert.ok(ok instanceof Promise);
    assert.equal((await ok).action, 'continue');
    assert.equal((await s.onRequest(testContext({ method: 'POST', body: '{"model":"large"}' }))).action, 'respond');
  });

  it('does not compile a non-boolean expression', () => {
    assert.throws(() => step([['Allow', '"text" + "more"']]), /matchExpressions\[0\]/);
  });
});
