import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { JsonRpcMessage } from '../jsonrpc.ts';
import { classify, decodeHeaderValue, META, ModernErrorCode } from './envelope.ts';

const envelope = { [META.protocolVersion]: '2026-07-28', [META.clientInfo]: { name: 'c', version: '1' }, [META.clientCapabilities]: {} };
const call = (params: Record<string, unknown> = {}): JsonRpcMessage => ({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'one_echo', arguments: {}, _meta: envelope, ...params } });
const headers = { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'one_echo' };

describe('stateless-era classification', () => {
  const cases: { name: string; message: JsonRpcMessage; headers: Record<string, string>; era: string; code?: number }[] = [
    { name: 'no envelope, no header: 2025 era', message: { jsonrpc: '2.0', id: 1, method: 'tools/list' }, headers: {}, era: 'legacy' },
    { name: 'no envelope, 2025 header: 2025 era', message: { jsonrpc: '2.0', id: 1, method: 'tools/list' }, headers: { 'mcp-protocol-version': '2025-11-25' }, era: 'legacy' },
    { name: 'modern header without envelope: invalid params', message: { jsonrpc: '2.0', id: 1, method: 'tools/list' }, headers: { 'mcp-protocol-version': '2026-07-28' }, era: 'rejected', code: -32602 },
    { name: 'complete request', message: call(), headers, era: 'modern' },
    { name: 'unsupported envelope version', message: call({ _meta: { ...envelope, [META.protocolVersion]: '2099-01-01' } }), headers, era: 'rejected', code: ModernErrorCode.UnsupportedProtocolVersion },
    { name: 'version header disagrees', message: call(), headers: { ...headers, 'mcp-protocol-version': '2025-11-25' }, era: 'rejected', code: ModernErrorCode.HeaderMismatch },
    { name: 'missing version header', message: call(), headers: { 'mcp-method': 'tools/call', 'mcp-name': 'one_echo' }, era: 'rejected', code: ModernErrorCode.HeaderMismatch },
    { name: 'missing Mcp-Method', message: call(), headers: { 'mcp-protocol-version': '2026-07-28', 'mcp-name': 'one_echo' }, era: 'rejected', code: ModernErrorCode.HeaderMismatch },
    { name: 'Mcp-Method disagrees', message: call(), headers: { ...headers, 'mcp-method': 'tools/list' }, era: 'rejected', code: ModernErrorCode.HeaderMismatch },
    { name: 'missing Mcp-Name on tools/call', message: call(), headers: { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call' }, era: 'rejected', code: ModernErrorCode.HeaderMismatch },
    { name: 'Mcp-Name disagrees', message: call(), headers: { ...headers, 'mcp-name': 'two_echo' }, era: 'rejected', code: ModernErrorCode.HeaderMismatch },
    { name: 'Mcp-Name in base64 sentinel', message: call({ name: 'é tool' }), headers: { ...headers, 'mcp-name': `=?base64?${Buffer.from('é tool').toString('base64')}?=` }, era: 'modern' },
    { name: 'notification without headers', message: { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1, _meta: envelope } }, headers: {}, era: 'modern' },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const result = classify(c.message, c.headers);
      assert.equal(result.era, c.era);
      if (result.era === 'rejected') {
        assert.equal(result.code, c.code);
        assert.equal(result.status, 400);
      }
    });
  }

  it('carries the envelope of a modern request', () => {
    const result = classify(call(), headers);
    assert.equal(result.era, 'modern');
    if (result.era === 'modern') assert.deepEqual(result.envelope.clientInfo, { name: 'c', version: '1' });
  });

  it('decodes header values', () => {
    assert.equal(decodeHeaderValue('plain'), 'plain');
    assert.equal(decodeHeaderValue(`=?base64?${Buffer.from('ü').toString('base64')}?=`), 'ü');
  });
});
