import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { translateAgentRuntime } from './agent-runtime-backend.ts';

const ARN = 'arn:aws:bedrock-agentcore:eu-central-1:123456789012:runtime/hosted_agent-Ab12Cd';

describe('ProxyBackend spec.cloudA.agentRuntime → IR', () => {
  const accepted: readonly { name: string; agentRuntime: Record<string, unknown>; ir: unknown }[] = [
    { name: 'an ARN: the region comes with it', agentRuntime: { agentRuntimeId: ARN }, ir: { runtimeId: ARN, region: 'eu-central-1' } },
    { name: 'an ARN in another partition', agentRuntime: { agentRuntimeId: 'arn:aws-cn:bedrock-agentcore:cn-north-1:123456789012:runtime/a-1' }, ir: { runtimeId: 'arn:aws-cn:bedrock-agentcore:cn-north-1:123456789012:runtime/a-1', region: 'cn-north-1' } },
    { name: 'a bare id with a qualifier: no region of its own', agentRuntime: { agentRuntimeId: 'hosted_agent-Ab12Cd', qualifier: 'prod' }, ir: { runtimeId: 'hosted_agent-Ab12Cd', qualifier: 'prod' } },
  ];
  for (const c of accepted) {
    it(`accepted: ${c.name}`, () => {
      const t = translateAgentRuntime({ cloudA: { agentRuntime: c.agentRuntime } }, 3);
      assert.deepEqual(t.ir, c.ir);
      assert.deepEqual(t.conditions.map((x) => [x.status, x.reason]), [['True', 'Accepted']]);
    });
  }

  const refused: readonly { name: string; agentRuntime: unknown; message: RegExp }[] = [
    { name: 'no agentRuntime object', agentRuntime: undefined, message: /spec\.cloudA\.agentRuntime must be an object/ },
    { name: 'an ARN of another service', agentRuntime: { agentRuntimeId: 'arn:aws:lambda:us-east-1:123456789012:function/x' }, message: /must be an agent runtime ARN/ },
    { name: 'an id with a path in it', agentRuntime: { agentRuntimeId: '../admin' }, message: /must be an agent runtime ARN/ },
    { name: 'a qualifier with a query in it', agentRuntime: { agentRuntimeId: 'a-1', qualifier: 'x&y=z' }, message: /qualifier must be an endpoint name or version/ },
  ];
  for (const c of refused) {
    it(`refused Invalid: ${c.name}`, () => {
      const t = translateAgentRuntime({ cloudA: { agentRuntime: c.agentRuntime } }, 3);
      assert.equal(t.ir, undefined);
      assert.equal(t.conditions[0]?.reason, 'Invalid');
      assert.match(t.conditions[0]?.message ?? '', c.message);
    });
  }
});
