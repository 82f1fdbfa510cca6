import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { assumeRoleForm, parseAssumeRoleResponse, stsEndpoint } from './sts.ts';

const CREDENTIALS = `
      <AccessKeyId>ASIAIOSFODNN7EXAMPLE</AccessKeyId>
      <SecretAccessKey>wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEY</SecretAccessKey>
      <SessionToken>AQoDYXdzEPT//////////wEXAMPLEtc764bNrC9SAPBSM22wDOk4x4HIZ8j4FZTwdQWLWsKWHGBuFqwAeMicRXmxfpSPfIeoIYRqTflfKD8YUuwthAx7mSEI/qkPpKPi/kMcGdQrmGdeehM4IC1NtBmUpp2wUE8phUZampKsburEDy0KPkyQDYwT7WZ0wq5VSXDvp75YU9HFvlRd8Tx6q6fE8YQcHNVXAkiY9q6d+xo0rKwT38xVqr7ZD0u0iPPkUL64lIZbqBAz+scqKmlzm8FDrypNC9Yjc8fPOLn9FX9KSYvKTr4rvx3iSIlTJabIQwj2ICCR/oLxBA==</SessionToken>
      <Expiration>2026-11-09T13:34:41Z</Expiration>`;

function response(inner: string): string {
  return `<AssumeRoleResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/">
  <AssumeRoleResult>
    <AssumedRoleUser><Arn>arn:aws:sts::123456789012:assumed-role/demo/TestAR</Arn><AssumedRoleId>ARO123EXAMPLE123:TestAR</AssumedRoleId></AssumedRoleUser>
    ${inner}
    <PackedPolicySize>6</PackedPolicySize>
  </AssumeRoleResult>
  <ResponseMetadata><RequestId>c6104cbe-af31-11e0-8154-cbc7ccf896c7</RequestId></ResponseMetadata>
</AssumeRoleResponse>`;
}

describe('parseAssumeRoleResponse', () => {
  it('reads the four credential fields of the documented shape', () => {
    const c = parseAssumeRoleResponse(response(`<Credentials>${CREDENTIALS}</Credentials>`));
    assert.equal(c.accessKeyId, 'ASIAIOSFODNN7EXAMPLE');
    assert.equal(c.secretAccessKey, 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEY');
    assert.match(c.sessionToken, /^AQoDYXdzEPT\/\/.*==$/);
    assert.equal(c.expiration, '2026-11-09T13:34:41Z');
  });

  it('decodes XML character references before checking the alphabet', () => {
    const c = parseAssumeRoleResponse(response(`<Credentials>${CREDENTIALS.replace('bPxRfiCYzEXAMPLEKEY', 'bPxRfiCYz&#x2F;EXAMPLEKEY')}</Credentials>`));
    assert.equal(c.secretAccessKey, 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYz/EXAMPLEKEY');
  });

  const bad: { name: string; xml: string }[] = [
    { name: 'an error document', xml: '<ErrorResponse><Error><Code>AccessDenied</Code></Error></ErrorResponse>' },
    { name: 'no Credentials', xml: response('') },
    { name: 'two Credentials elements', xml: response(`<Credentials>${CREDENTIALS}</Credentials><Credentials>${CREDENTIALS}</Credentials>`) },
    { name: 'a missing SessionToken', xml: response(`<Credentials>${CREDENTIALS.replace(/<SessionToken>.*<\/SessionToken>/, '')}</Credentials>`) },
    { name: 'markup inside a value', xml: response(`<Credentials>${CREDENTIALS.replace('ASIAIOSFODNN7EXAMPLE', 'ASIA<b>X</b>')}</Credentials>`) },
    { name: 'an expiration that is not a timestamp', xml: response(`<Credentials>${CREDENTIALS.replace('2026-11-09T13:34:41Z', 'tomorrow')}</Credentials>`) },
    { name: 'the right elements under another root', xml: `<GetSessionTokenResponse><AssumeRoleResult><Credentials>${CREDENTIALS}</Credentials></AssumeRoleResult></GetSessionTokenResponse>` },
  ];
  for (const c of bad) it(`refuses ${c.name}`, () => assert.throws(() => parseAssumeRoleResponse(c.xml), /STS answer/));
});

describe('assumeRoleForm and stsEndpoint', () => {
  it('Query-protocol parameters with tags as Tags.member.N', () => {
    const form = new URLSearchParams(assumeRoleForm({ roleArn: 'arn:aws:iam::123456789012:role/r', sessionName: 's@x', tags: [{ key: 'team', value: 'ml ops' }, { key: 'k2', value: '' }], region: 'us-east-1' }));
    assert.deepEqual([...form], [
      ['Action', 'AssumeRole'], ['Version', '2011-06-15'], ['RoleArn', 'arn:aws:iam::123456789012:role/r'], ['RoleSessionName', 's@x'], ['DurationSeconds', '3600'],
      ['Tags.member.1.Key', 'team'], ['Tags.member.1.Value', 'ml ops'], ['Tags.member.2.Key', 'k2'], ['Tags.member.2.Value', ''],
    ]);
  });

  const endpoints = [
    { name: 'regional endpoint', region: 'eu-west-1', expect: 'https://sts.eu-west-1.amazonaws.com/' },
    { name: 'China partition', region: 'cn-north-1', expect: 'https://sts.cn-north-1.amazonaws.com.cn/' },
    { name: 'AWS_ENDPOINT_URL_STS wins', region: 'eu-west-1', override: 'http://127.0.0.1:4566', expect: 'http://127.0.0.1:4566/' },
  ];
  for (const c of endpoints) it(c.name, () => assert.equal(stsEndpoint(c.region, c.override).href, c.expect));
});
