import assert from 'node:assert/strict';
import type { IncomingHttpHeaders } from 'node:http';
import { describe, it } from 'node:test';
import type { CredentialLocation } from '../../../ir/policy.ts';
import { challengeScheme, compileCredentialExtractor } from './location.ts';
import { testContext } from '../../testing/credential-context.ts';

const BEARER: CredentialLocation = { header: { name: 'Authorization', prefix: 'Bearer ' } };

const cases: { name: string; location: CredentialLocation; headers?: IncomingHttpHeaders; query?: string; want: string | undefined }[] = [
  { name: 'bearer token', location: BEARER, headers: { authorization: 'Bearer abc.def' }, want: 'abc.def' },
  { name: 'scheme is case-insensitive', location: BEARER, headers: { authorization: 'bearer abc' }, want: 'abc' },
  { name: 'extra whitespace after the scheme', location: BEARER, headers: { authorization: 'Bearer   abc  ' }, want: 'abc' },
  { name: 'prefix written without its space', location: { header: { name: 'Authorization', prefix: 'Bearer' } }, headers: { authorization: 'Bearer abc' }, want: 'abc' },
  { name: 'another scheme is absent', location: BEARER, headers: { authorization: 'Basic dXNlcjpwdw==' }, want: undefined },
  { name: 'scheme glued to the value is absent', location: BEARER, headers: { authorization: 'Bearerabc' }, want: undefined },
  { name: 'scheme alone is absent', location: BEARER, headers: { authorization: 'Bearer ' }, want: undefined },
  { name: 'missing header', location: BEARER, want: undefined },
  { name: 'header without prefix', location: { header: { name: 'X-API-Key' } }, headers: { 'x-api-key': ' k1 ' }, want: 'k1' },
  { name: 'punctuation prefix needs no separator', location: { header: { name: 'x-auth', prefix: 'token=' } }, headers: { 'x-auth': 'token=k2' }, want: 'k2' },
  { name: 'query parameter, percent-decoded', location: { queryParameter: { name: 'api_key' } }, query: 'a=1&api_key=k%2B3', want: 'k+3' },
  { name: 'query parameter missing', location: { queryParameter: { name: 'api_key' } }, query: 'a=1', want: undefined },
  { name: 'cookie among several', location: { cookie: { name: 'session' } }, headers: { cookie: 'a=1; session=tok; b=2' }, want: 'tok' },
  { name: 'quoted cookie', location: { cookie: { name: 'session' } }, headers: { cookie: 'session="tok"' }, want: 'tok' },
  { name: 'cookie name is exact', location: { cookie: { name: 'session' } }, headers: { cookie: 'xsession=tok' }, want: undefined },
  { name: 'CEL expression', location: { expression: 'request.headers["x-token"].split(":")[1]' }, headers: { 'x-token': 'v1:secret' }, want: 'secret' },
  { name: 'failing CEL expression is absent', location: { expression: 'request.headers["x-token"]' }, want: undefined },
];

describe('credential extraction', () => {
  for (const c of cases) {
    it(c.name, () => {
      const extract = compileCredentialExtractor(c.location, 'location');
      assert.equal(extract(testContext({ headers: c.headers, query: c.query })), c.want);
    });
  }

  it('rejects a CEL expression that does not compile', () => {
    assert.throws(() => compileCredentialExtractor({ expression: 'request.headers[' }, 'location'), /invalid CEL expression/);
  });

  it('names the challenge scheme only for the Authorization header', () => {
    assert.equal(challengeScheme(BEARER), 'Bearer');
    assert.equal(challengeScheme({ header: { name: 'authorization', prefix: 'Basic ' } }), 'Basic');
    assert.equal(challengeScheme({ header: { name: 'x-api-key' } }), undefined);
    assert.equal(challengeScheme({ queryParameter: { name: 'k' } }), undefined);
  });
});
