import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compile, createActivation } from './index.ts';
import type { CelInput } from './index.ts';

/** Every variable of docs/cel.md, as the proxy fills it, seen from an expression. */

const full: CelInput = {
  request: {
    method: 'POST',
    url: '/v1/chat/completions?stream=true&tag=a&tag=b&q=a%20b',
    host: 'api.example.com',
    scheme: 'https',
    version: 'HTTP/1.1',
    headers: { 'Content-Type': 'application/json', 'x-multi': ['1', '2'], 'x-absent': undefined },
    body: Buffer.from('{"model":"gpt-4o","max_tokens":100}'),
    startTime: Date.parse('2025-03-01T12:00:00Z'),
  },
  source: { address: '::ffff:10.1.2.3', port: 40000, identity: 'spiffe://cluster.local/ns/a/sa/b', subjectAltNames: ['spiffe://cluster.local/ns/a/sa/b'], subject: 'CN=client', issuer: 'CN=ca' },
  jwt: { sub: 'user-1', iss: 'https://idp', exp: 1760000000, groups: ['admin', 'dev'], ratio: 0.5, nested: { tier: 'gold' } },
  apiKey: { name: 'team-a', metadata: { group: 'research', limit: 10 } },
  basicAuth: { user: 'alice' },
  llm: { requestModel: 'gpt-4o', responseModel: 'gpt-4o-2024-08-06', provider: 'providerA', inputTokens: 12, outputTokens: 30, streaming: true },
  mcp: { method: 'tools/call', target: 'github', tool: { name: 'create_issue' } },
  response: { code: 503, headers: { 'Retry-After': '5' }, body: '{"error":"busy"}' },
  backend: { name: 'openai', namespace: 'ai', type: 'ai', protocol: 'http' },
  route: { name: 'chat', namespace: 'ai', rule: 'rule-0' },
  gateway: { name: 'gw', namespace: 'infra', listener: 'https' },
  extauthz: { tenant: 'acme' },
  extproc: { decision: 'ok' },
};

type Row = { name: string; expr: string; want: unknown; input?: CelInput };

const rows: Row[] = [
  { name: 'request.method', expr: 'request.method', want: 'POST' },
  { name: 'request.path has no query', expr: 'request.path', want: '/v1/chat/completions' },
  { name: 'request.uri keeps the query', expr: 'request.uri.endsWith("q=a%20b")', want: true },
  { name: 'request.host', expr: 'request.host', want: 'api.example.com' },
  { name: 'request.scheme', expr: 'request.scheme', want: 'https' },
  { name: 'request.version', expr: 'request.version', want: 'HTTP/1.1' },
  { name: 'request.headers are lower-case', expr: 'request.headers["content-type"]', want: 'application/json' },
  { name: 'repeated headers are joined', expr: 'request.headers["x-multi"]', want: '1, 2' },
  { name: 'undefined header values are absent', expr: '"x-absent" in request.headers', want: false },
  { name: 'missing header with has()', expr: 'has(request.headers.authorization)', want: false },
  { name: 'missing header with optional', expr: 'request.headers[?"authorization"].orValue("none")', want: 'none' },
  { name: 'request.query first value, decoded', expr: '[request.query.tag, request.query.q]', want: ['a', 'a b'] },
  { name: 'request.body is bytes', expr: 'type(request.body) == bytes && size(request.body) > 10', want: true },
  { name: 'request.body as JSON', expr: 'json(request.body).max_tokens', want: 100n },
  { name: 'request.startTime is a timestamp', expr: 'request.startTime == timestamp("2025-03-01T12:00:00Z")', want: true },
  { name: 'source.address unmaps IPv4', expr: 'source.address', want: '10.1.2.3' },
  { name: 'source.port is an int', expr: 'source.port + 1', want: 40001n },
  { name: 'source.identity', expr: 'source.identity.startsWith("spiffe://")', want: true },
  { name: 'source.subjectAltNames', expr: 'source.subjectAltNames.size()', want: 1n },
  { name: 'source.subject and issuer', expr: 'source.subject + "/" + source.issuer', want: 'CN=client/CN=ca' },
  { name: 'jwt.sub', expr: 'jwt.sub', want: 'user-1' },
  { name: 'jwt whole-number claim is int', expr: 'jwt.exp + 60', want: 1760000060n },
  { name: 'jwt fractional claim is double', expr: 'jwt.ratio * 2.0', want: 1 },
  { name: 'jwt list claim', expr: '"admin" in jwt.groups', want: true },
  { name: 'jwt nested claim', expr: 'jwt.nested.tier', want: 'gold' },
  { name: 'apiKey.name', expr: 'apiKey.name', want: 'team-a' },
  { name: 'apiKey metadata at top level', expr: 'apiKey.group', want: 'research' },
  { name: 'apiKey.metadata', expr: 'apiKey.metadata.limit', want: 10n },
  { name: 'basicAuth.user', expr: 'basicAuth.user', want: 'alice' },
  { name: 'llm.requestModel', expr: 'llm.requestModel', want: 'gpt-4o' },
  { name: 'llm.responseModel', expr: 'llm.responseModel', want: 'gpt-4o-2024-08-06' },
  { name: 'llm.provider', expr: 'llm.provider', want: 'providerA' },
  { name: 'llm token counts are ints', expr: '[llm.inputTokens, llm.outputTokens]', want: [12n, 30n] },
  { name: 'llm.totalTokens defaults to the sum', expr: 'llm.totalTokens', want: 42n },
  { name: 'llm.streaming', expr: 'llm.streaming', want: true },
  { name: 'mcp.method', expr: 'mcp.method', want: 'tools/call' },
  { name: 'mcp.tool.name', expr: 'mcp.tool.name', want: 'create_issue' },
  { name: 'mcp.tool.target inherits mcp.target', expr: 'mcp.tool.target', want: 'github' },
  { name: 'mcp prompt absent', expr: 'has(mcp.prompt)', want: false },
  { name: 'response.code is an int', expr: 'response.code >= 500', want: true },
  { name: 'response.headers', expr: 'response.headers["retry-after"]', want: '5' },
  { name: 'response.body', expr: 'json(response.body).error', want: 'busy' },
  { name: 'backend', expr: 'backend.name + "/" + backend.type', want: 'openai/ai' },
  { name: 'route', expr: 'route.namespace + "/" + route.name + "#" + route.rule', want: 'ai/chat#rule-0' },
  { name: 'gateway', expr: 'gateway.name + ":" + gateway.listener', want: 'gw:https' },
  { name: 'extauthz', expr: 'extauthz.tenant', want: 'acme' },
  { name: 'extproc', expr: 'extproc.decision', want: 'ok' },
  // Missing variables behave predictably: present as empty maps.
  { name: 'no JWT: has() is false', expr: 'has(jwt.sub)', want: false, input: {} },
  { name: 'no JWT: the map is empty', expr: 'size(jwt)', want: 0n, input: {} },
  { name: 'no request: no headers', expr: 'has(request.headers)', want: false, input: {} },
  { name: 'request without headers: empty map', expr: 'size(request.headers)', want: 0n, input: { request: { method: 'GET', url: '/' } } },
  { name: 'request without body: has() is false', expr: 'has(request.body)', want: false, input: { request: { method: 'GET', url: '/' } } },
  { name: 'lazy body thunk', expr: 'string(request.body)', want: 'hi', input: { request: { method: 'POST', url: '/', body: () => 'hi' } } },
  { name: 'lazy body thunk without a body', expr: 'has(request.body)', want: false, input: { request: { method: 'POST', url: '/', body: () => undefined } } },
  { name: 'a claim named __proto__ is ordinary data', expr: 'jwt.__proto__', want: 'x', input: { jwt: JSON.parse('{"__proto__":"x"}') as Record<string, unknown> } },
];

describe('CEL variables', () => {
  const activation = createActivation(full);
  for (const row of rows) {
    it(row.name, () => {
      const compiled = compile(row.expr);
      assert.ok(compiled.ok, compiled.ok ? '' : compiled.error.message);
      const result = compiled.program.evaluate(row.input ? createActivation(row.input) : activation);
      assert.ok(result.ok, result.ok ? '' : result.error.message);
      assert.deepEqual(result.value, row.want);
    });
  }

  it('a missing field is an evaluation failure, not an exception', () => {
    const compiled = compile('jwt.sub == "x"');
    assert.ok(compiled.ok);
    const result = compiled.program.evaluate(createActivation({}));
    assert.equal(result.ok, false);
    assert.equal(result.ok ? '' : result.error.code, 'no_such_key');
  });

  it('an unknown variable is a compile error', () => {
    const compiled = compile('reqest.path == "/"');
    assert.equal(compiled.ok, false);
  });

  it('the body thunk runs once, and only when read', () => {
    let calls = 0;
    const activation = createActivation({ request: { method: 'POST', url: '/', body: () => { calls++; return 'x'; } } });
    const noBody = compile('request.method == "POST"');
    const withBody = compile('size(request.body) == 1 && size(request.body) == 1');
    assert.ok(noBody.ok && withBody.ok);
    noBody.program.evaluate(activation);
    assert.equal(calls, 0);
    assert.deepEqual(withBody.program.evaluate(activation), { ok: true, value: true });
    withBody.program.evaluate(activation);
    assert.equal(calls, 1);
  });
});
