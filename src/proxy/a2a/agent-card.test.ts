import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { agentCardFilter, MAX_CARD_BYTES, rewriteAgentCard, rewrittenPrefix, toGatewayUrl } from './agent-card.ts';
import { agentCardRequest } from './card-request.ts';

const GW = 'https://gw.example.com';

describe('toGatewayUrl', () => {
  const rows: { name: string; url: string; want: string }[] = [
    { name: 'origin replaced, path and query kept', url: 'http://10.0.0.7:9999/a2a/jsonrpc?x=1', want: 'https://gw.example.com/a2a/jsonrpc?x=1' },
    { name: 'root path', url: 'https://agent.internal', want: 'https://gw.example.com/' },
    { name: 'not a URL: left alone', url: 'agent:50051', want: 'agent:50051' },
    { name: 'a gRPC-style scheme: left alone', url: 'grpc://agent:50051', want: 'grpc://agent:50051' },
  ];
  for (const row of rows) it(row.name, () => assert.equal(toGatewayUrl(row.url, GW), row.want));
});

describe('rewrittenPrefix and the prefix given back', () => {
  const rows: { name: string; client: string; upstream: string; url: string; want: string }[] = [
    { name: 'no rewrite', client: '/.well-known/agent.json', upstream: '/.well-known/agent.json', url: 'http://a/rpc', want: `${GW}/rpc` },
    { name: 'prefix removed', client: '/agents/echo/.well-known/agent.json', upstream: '/.well-known/agent.json', url: 'http://a/rpc', want: `${GW}/agents/echo/rpc` },
    { name: 'prefix replaced', client: '/echo/.well-known/agent.json', upstream: '/v2/.well-known/agent.json', url: 'http://a/v2/rpc', want: `${GW}/echo/rpc` },
    { name: 'prefixes sharing a tail are whole segments', client: '/ab/.well-known/agent.json', upstream: '/b/.well-known/agent.json', url: 'http://a/b/rpc', want: `${GW}/ab/rpc` },
    { name: 'outside the replaced prefix: kept', client: '/echo/.well-known/agent.json', upstream: '/v2/.well-known/agent.json', url: 'http://a/v20/rpc', want: `${GW}/v20/rpc` },
  ];
  for (const row of rows) it(row.name, () => assert.equal(toGatewayUrl(row.url, GW, rewrittenPrefix(row.client, row.upstream)), row.want));
});

describe('rewriteAgentCard', () => {
  it('v0.3: url and additionalInterfaces[].url; provider and documentation pages stay', () => {
    const card = {
      url: 'http://agent:8080/rpc', additionalInterfaces: [{ url: 'http://agent:8080/rest', transport: 'HTTP+JSON' }, { transport: 'GRPC' }],
      provider: { url: 'https://example.org' }, documentationUrl: 'https://example.org/docs', iconUrl: 'https://example.org/i.png',
    };
    assert.deepEqual(rewriteAgentCard(card, GW), {
      url: `${GW}/rpc`, additionalInterfaces: [{ url: `${GW}/rest`, transport: 'HTTP+JSON' }, { transport: 'GRPC' }],
      provider: { url: 'https://example.org' }, documentationUrl: 'https://example.org/docs', iconUrl: 'https://example.org/i.png',
    });
  });
  it('v1.0: supportedInterfaces[].url', () => {
    const card = { supportedInterfaces: [{ url: 'http://agent/a2a/jsonrpc', protocolBinding: 'JSONRPC' }, { url: 'http://agent/a2a/rest', protocolBinding: 'HTTP+JSON' }] };
    assert.deepEqual(rewriteAgentCard(card, GW), { supportedInterfaces: [{ url: `${GW}/a2a/jsonrpc`, protocolBinding: 'JSONRPC' }, { url: `${GW}/a2a/rest`, protocolBinding: 'HTTP+JSON' }] });
  });
  describe('signed cards (A2A §8.4: the signature covers every URL)', () => {
    const signatures = [{ protected: 'eyJhbGciOiJFUzI1NiJ9', signature: 'c2ln' }];
    const rows: { name: string; card: Record<string, unknown>; kept: boolean }[] = [
      { name: 'v1.0, a URL rewritten: signatures dropped (they would no longer verify)', card: { supportedInterfaces: [{ url: 'http://agent/a2a/jsonrpc', protocolBinding: 'JSONRPC' }], signatures }, kept: false },
      { name: 'v0.3, only an additional interface rewritten: dropped', card: { url: `${GW}/rpc`, additionalInterfaces: [{ url: 'http://agent/rest' }], signatures }, kept: false },
      { name: 'every URL already names the gateway: the card is unchanged and keeps them', card: { url: `${GW}/rpc`, supportedInterfaces: [{ url: `${GW}/a2a/jsonrpc` }], signatures }, kept: true },
      { name: 'no endpoint URL at all (a gRPC host:port form): unchanged, kept', card: { supportedInterfaces: [{ url: 'agent:50051', protocolBinding: 'GRPC' }], signatures }, kept: true },
    ];
    for (const row of rows) {
      it(row.name, () => {
        const out = rewriteAgentCard(row.card, GW) as Record<string, unknown>;
        assert.equal('signatures' in out, row.kept);
        if (row.kept) assert.deepEqual(out, row.card);
      });
    }
  });
  it('not an object: returned as is', () => {
    assert.deepEqual(rewriteAgentCard([1], GW), [1]);
    assert.equal(rewriteAgentCard('x', GW), 'x');
  });
});

async function run(filterBody: Buffer, status = 200, type = 'application/json'): Promise<string> {
  const filter = agentCardFilter(GW);
  async function* source(): AsyncIterable<Uint8Array> {
    yield filterBody;
  }
  const chunks: Uint8Array[] = [];
  for await (const c of filter.body(source(), { status, headers: { 'content-type': type } })) chunks.push(c);
  return Buffer.concat(chunks).toString();
}

describe('agentCardFilter', () => {
  it('rewrites a 200 JSON card', async () => {
    assert.deepEqual(JSON.parse(await run(Buffer.from('{"url":"http://agent/rpc"}'))), { url: `${GW}/rpc` });
  });
  it('passes a 404 and a non-JSON answer unchanged', async () => {
    assert.equal(await run(Buffer.from('{"url":"http://agent/rpc"}'), 404), '{"url":"http://agent/rpc"}');
    assert.equal(await run(Buffer.from('http://agent/rpc'), 200, 'text/plain'), 'http://agent/rpc');
  });
  it('a card that does not parse, or is over the bound, is a 502 invalid_agent_card', async () => {
    for (const body of [Buffer.from('{nope'), Buffer.alloc(MAX_CARD_BYTES + 1, 0x20)]) {
      const err = (await run(body).then(() => assert.fail('expected a failure'), (e: unknown) => e)) as { response?: { status: number; body: Uint8Array } };
      assert.equal(err.response?.status, 502);
      assert.match(Buffer.from(err.response.body).toString(), /invalid_agent_card/);
    }
  });
});

describe('agentCardRequest', () => {
  const paths = new Set(['/.well-known/agent-card.json', '/.well-known/agent.json']);
  it('a GET of a card path (query ignored): the filter, and the upstream asked uncompressed', () => {
    const headers: Record<string, string | undefined> = { 'accept-encoding': 'gzip' };
    assert.ok(agentCardRequest(paths, { method: 'GET', clientPath: '/.well-known/agent.json', path: '/.well-known/agent.json?v=1', headers }, { host: 'gw' }, 'http'));
    assert.equal(headers['accept-encoding'], undefined);
  });
  it('other methods, other paths, no Host: nothing', () => {
    const headers = { 'accept-encoding': 'gzip' };
    const at = (method: string, path: string) => ({ method, clientPath: path, path, headers });
    assert.equal(agentCardRequest(paths, at('POST', '/.well-known/agent.json'), { host: 'gw' }, 'http'), undefined);
    assert.equal(agentCardRequest(paths, at('GET', '/a2a/jsonrpc'), { host: 'gw' }, 'http'), undefined);
    assert.equal(agentCardRequest(paths, at('GET', '/.well-known/agent.json'), {}, 'http'), undefined);
    assert.equal(headers['accept-encoding'], 'gzip');
  });
});
