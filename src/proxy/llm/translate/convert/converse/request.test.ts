import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Request } from '../../canonical.ts';
import { ToolNameMap } from '../tool-names.ts';
import { writeConverseRequest } from './request.ts';

describe('writeConverseRequest', () => {
  it('declares the tools a tool-use history needs when the request itself has none', () => {
    const req: Request = {
      model: 'm', system: [], stream: false,
      messages: [
        { role: 'user', parts: [{ type: 'text', text: 'hi' }] },
        { role: 'assistant', parts: [{ type: 'tool_call', id: 't1', name: 'lookup.user', arguments: '{}' }] },
        { role: 'user', parts: [{ type: 'tool_result', toolCallId: 't1', content: [{ type: 'text', text: 'ok' }] }] },
      ],
    };
    const out = writeConverseRequest(req, new ToolNameMap());
    assert.deepEqual(out.toolConfig, { tools: [{ toolSpec: { name: 'lookup_user', inputSchema: { json: { type: 'object' } } } }] });
  });
});
