import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { invocationPath, runtimeOrigin, runtimeRegion } from './endpoint.ts';

const ARN = 'arn:aws:bedrock-agentcore:us-west-2:123456789012:runtime/hosted_agent-AbC12';

describe('agent runtime endpoint', () => {
  const paths: readonly { name: string; ir: { runtimeId: string; qualifier?: string }; want: string }[] = [
    { name: 'an ARN is one encoded segment (":" and "/" escaped)', ir: { runtimeId: ARN }, want: '/runtimes/arn%3Aaws%3Abedrock-agentcore%3Aus-west-2%3A123456789012%3Aruntime%2Fhosted_agent-AbC12/invocations' },
    { name: 'a bare id stays as written', ir: { runtimeId: 'hosted_agent-AbC12' }, want: '/runtimes/hosted_agent-AbC12/invocations' },
    { name: 'the qualifier is a query parameter', ir: { runtimeId: 'a-1', qualifier: 'DEFAULT' }, want: '/runtimes/a-1/invocations?qualifier=DEFAULT' },
  ];
  for (const c of paths) it(`path: ${c.name}`, () => assert.equal(invocationPath(c.ir), c.want));

  const regions: readonly { name: string; policy?: string; arn?: string; env?: string; want: string | undefined }[] = [
    { name: 'the policy region wins', policy: 'eu-west-1', arn: 'us-west-2', env: 'ap-south-1', want: 'eu-west-1' },
    { name: 'then the ARN region', arn: 'us-west-2', env: 'ap-south-1', want: 'us-west-2' },
    { name: 'then AWS_REGION', env: 'ap-south-1', want: 'ap-south-1' },
    { name: 'none: undefined (the handler refuses)', want: undefined },
    { name: 'not a region name: undefined (never put in a host name)', env: 'evil.example.com/x', want: undefined },
  ];
  for (const c of regions) {
    it(`region: ${c.name}`, () => {
      const ir = { runtimeId: 'a-1', ...(c.arn ? { region: c.arn } : {}) };
      assert.equal(runtimeRegion(ir, c.policy, c.env ? { AWS_REGION: c.env } : {}), c.want);
    });
  }

  it('origin: the regional endpoint over TLS, China regions under amazonaws.com.cn', () => {
    assert.deepEqual(runtimeOrigin('us-east-1', undefined), { tls: true, host: 'bedrock-agentcore.us-east-1.amazonaws.com', port: 443, authority: 'bedrock-agentcore.us-east-1.amazonaws.com', origin: 'https://bedrock-agentcore.us-east-1.amazonaws.com:443' });
    assert.equal(runtimeOrigin('cn-north-1', undefined).host, 'bedrock-agentcore.cn-north-1.amazonaws.com.cn');
  });

  it('origin: the override URL replaces the endpoint (http allowed, port kept in the authority)', () => {
    assert.deepEqual(runtimeOrigin('us-east-1', 'http://127.0.0.1:8123'), { tls: false, host: '127.0.0.1', port: 8123, authority: '127.0.0.1:8123', origin: 'http://127.0.0.1:8123' });
  });
});
