import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ToolNameMap } from './tool-names.ts';

describe('ToolNameMap', () => {
  it('keeps valid names and restores sanitised ones', () => {
    const m = new ToolNameMap();
    assert.equal(m.upstream('get_weather'), 'get_weather');
    assert.equal(m.upstream('mcp.server/tool'), 'mcp_server_tool');
    assert.equal(m.client('mcp_server_tool'), 'mcp.server/tool');
    assert.equal(m.client('unknown'), 'unknown');
  });

  it('disambiguates names that sanitise alike, within 64 characters', () => {
    const m = new ToolNameMap();
    const a = m.upstream('a.b');
    const b = m.upstream('a/b');
    assert.notEqual(a, b);
    assert.equal(m.client(b), 'a/b');
    const long = m.upstream(`${'x'.repeat(70)}.`);
    assert.match(long, /^[a-zA-Z0-9_-]{1,64}$/);
    const long2 = m.upstream(`${'x'.repeat(70)}/`);
    assert.match(long2, /^[a-zA-Z0-9_-]{1,64}$/);
    assert.notEqual(long, long2);
  });
});
