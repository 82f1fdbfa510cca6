import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { fakePolicyContext } from '../../testing/policy-context.ts';
import { mcpCall, serviceCall, type ForwardView } from './cloud-auth.ts';

const fwd = (headers: Record<string, string>, rewriteHostname?: string): ForwardView => ({
  headers, target: { authority: '10.0.0.7:8443' }, filters: rewriteHostname ? { rewrite: { hostname: rewriteHostname } } : {},
});

describe('serviceCall: the proxied request as it will be signed', () => {
  const hosts: { name: string; headers: Record<string, string>; rewrite?: 'Auto' | 'None'; hostname?: string; want: string }[] = [
    { name: 'the Host the request carries', headers: { host: 'api.example' }, want: 'api.example' },
    { name: 'hostRewrite Auto: the destination authority (the Exchange sets it after the credentials)', headers: { host: 'api.example' }, rewrite: 'Auto', want: '10.0.0.7:8443' },
    { name: 'hostRewrite None: the client\'s Host', headers: { host: 'rewritten.example' }, rewrite: 'None', want: 'client.example' },
    { name: 'a URLRewrite hostname wins over hostRewrite', headers: { host: 'from-filter.example' }, rewrite: 'Auto', hostname: 'from-filter.example', want: 'from-filter.example' },
    { name: 'no Host header: the destination authority', headers: {}, want: '10.0.0.7:8443' },
  ];
  for (const c of hosts) {
    it(`host: ${c.name}`, () => {
      const ctx = fakePolicyContext({ host: 'client.example' });
      if (c.rewrite) ctx.upstream.hostRewrite = c.rewrite;
      assert.equal(serviceCall(fwd(c.headers, c.hostname), ctx).host, c.want);
    });
  }

  const bodies: { name: string; method: string; headers?: Record<string, string>; buffered?: string; stream?: boolean; want: 'empty' | 'unsigned' | string }[] = [
    { name: 'GET without a body', method: 'GET', want: 'empty' },
    { name: 'content-length 0', method: 'POST', headers: { 'content-length': '0' }, want: 'empty' },
    { name: 'a streamed body (content-length)', method: 'POST', headers: { 'content-length': '12' }, want: 'unsigned' },
    { name: 'a chunked body', method: 'PUT', headers: { 'transfer-encoding': 'chunked' }, want: 'unsigned' },
    { name: 'POST without framing headers (HTTP/2 may stream one)', method: 'POST', want: 'unsigned' },
    { name: 'a body a policy buffered', method: 'POST', headers: { 'content-length': '5' }, buffered: 'hello', want: 'hello' },
    { name: 'a processed stream (ext_proc) replaces even a buffered body', method: 'POST', buffered: 'hello', stream: true, want: 'unsigned' },
  ];
  for (const c of bodies) {
    it(`body: ${c.name}`, () => {
      const ctx = Object.assign(fakePolicyContext({ method: c.method, headers: c.headers ?? {} }), c.buffered !== undefined ? { bufferedBody: Buffer.from(c.buffered) } : {});
      if (c.stream) ctx.upstream.bodyStream = (async function* () {})();
      const body = serviceCall(fwd({ host: 'h' }), ctx).body;
      if (c.want === 'unsigned') assert.equal(body, 'UNSIGNED-PAYLOAD');
      else assert.equal(Buffer.from(body as Uint8Array).toString(), c.want === 'empty' ? '' : c.want);
    });
  }
});

describe('mcpCall: the target request the gateway built', () => {
  it('the Host header when set (a pinned endpoint), else the origin\'s; the body as sent', () => {
    const call = mcpCall({ host: 'tools.example:8080' }, 'POST', 'http://10.0.0.9:8080', '{"jsonrpc":"2.0"}');
    assert.deepEqual({ ...call, body: createHash('sha256').update(call.body as Uint8Array).digest('hex') }, { method: 'POST', host: 'tools.example:8080', body: createHash('sha256').update('{"jsonrpc":"2.0"}').digest('hex') });
    assert.equal(mcpCall({}, 'GET', 'https://tools.example', undefined).host, 'tools.example');
    assert.equal((mcpCall({}, 'DELETE', 'http://10.0.0.9:9000', undefined).body as Uint8Array).length, 0);
  });
});
