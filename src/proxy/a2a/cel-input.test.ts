import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { a2aCelInput } from './cel-input.ts';

const rpc = (method: string, params: unknown): Buffer => Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }));

describe('a2aCelInput', () => {
  const rows: { name: string; body: Buffer; want: ReturnType<typeof a2aCelInput> }[] = [
    {
      name: 'v1.0 SendMessage with context, task and a skill in the metadata',
      body: rpc('SendMessage', { message: { taskId: 't1', contextId: 'c1', metadata: { skill: 'echo' } } }),
      want: { method: 'SendMessage', taskId: 't1', contextId: 'c1', skill: 'echo' },
    },
    { name: 'v0.3 message/send without ids', body: rpc('message/send', { message: { parts: [] } }), want: { method: 'message/send' } },
    { name: 'v0.3 tasks/get names the task as params.id', body: rpc('tasks/get', { id: 't2' }), want: { method: 'tasks/get', taskId: 't2' } },
    { name: 'v1.0 GetTask names it as tasks/{id}', body: rpc('GetTask', { name: 'tasks/t3' }), want: { method: 'GetTask', taskId: 't3' } },
    { name: 'a non-string skill is left out', body: rpc('SendMessage', { message: { metadata: { skill: 7 } } }), want: { method: 'SendMessage' } },
    { name: 'no params', body: Buffer.from('{"jsonrpc":"2.0","id":1,"method":"GetExtendedAgentCard"}'), want: { method: 'GetExtendedAgentCard' } },
    { name: 'not JSON-RPC (REST body)', body: Buffer.from('{"message":{}}'), want: undefined },
    { name: 'not JSON', body: Buffer.from('{nope'), want: undefined },
    { name: 'empty', body: Buffer.alloc(0), want: undefined },
  ];
  for (const row of rows) it(row.name, () => assert.deepEqual(a2aCelInput(row.body), row.want));
});
