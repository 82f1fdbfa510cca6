import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Logger } from '../../../common/logger.ts';
import type { FrontendPolicy } from '../../../ir/policy.ts';
import type { DownstreamRequest } from '../../http/downstream.ts';
import { RequestFacts } from '../../telemetry/request-facts.ts';
import { accessLogReadsFacts, writeAccessLog } from './access-log.ts';
import { compileFrontend } from './compile.ts';

function capture(): { logger: Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const logger = { isLevelEnabled: () => true, info: (fields: Record<string, unknown>) => lines.push(fields) } as unknown as Logger;
  return { logger, lines };
}

const req = { method: 'GET', url: '/v1/chat?x=1', headers: { host: 'api.test', 'x-team': 'blue' }, httpVersion: '1.1', socket: { remoteAddress: '10.1.2.3', remotePort: 5555 } } as unknown as DownstreamRequest;
const record = (status: number) => ({ method: 'GET', path: '/v1/chat', status, durationMs: 1.5, route: 'default/r', backend: 'service/default/api:80', bytes: 10 });
const NAMES = { gateway: 'default/gw', listener: 'http', route: 'default/r', backend: 'service/default/api:80' };
const settingsOf = (accessLog: FrontendPolicy['accessLog']) => {
  const errors: string[] = [];
  const compiled = compileFrontend({ accessLog, sources: {} }, (m) => errors.push(m));
  return { settings: compiled?.accessLog, errors };
};

describe('writeAccessLog', () => {
  it('logs only what the filter lets through', () => {
    const { logger, lines } = capture();
    const { settings } = settingsOf({ filter: 'response.code >= 500' });
    writeAccessLog(logger, settings, record(200), req, 'http', NAMES, undefined);
    writeAccessLog(logger, settings, record(503), req, 'http', NAMES, undefined);
    assert.deepEqual(lines.map((l) => l.status), [503]);
  });

  it('removes default fields, adds CEL attributes and drops a failing pair', () => {
    const { logger, lines } = capture();
    const { settings, errors } = settingsOf({
      attributes: { remove: ['bytes', 'durationMs'], add: [
        { name: 'team', expression: 'request.headers["x-team"]' },
        { name: 'client', expression: 'source.address' },
        { name: 'missing', expression: 'request.headers["absent"]' },
      ] },
    });
    assert.deepEqual(errors, []);
    writeAccessLog(logger, settings, record(200), req, 'http', NAMES, undefined);
    assert.deepEqual(lines, [{ method: 'GET', path: '/v1/chat', status: 200, route: 'default/r', backend: 'service/default/api:80', team: 'blue', client: '10.1.2.3' }]);
  });

  it('reports an expression that does not compile and keeps logging', () => {
    const { logger, lines } = capture();
    const { settings, errors } = settingsOf({ attributes: { add: [{ name: 'bad', expression: 'request.(' }] } });
    assert.equal(errors.length, 1);
    writeAccessLog(logger, settings, record(200), req, 'http', NAMES, undefined);
    assert.equal(lines.length, 1);
  });

  it('a bind whose access log has no filter and no added attribute carries no facts', () => {
    assert.equal(accessLogReadsFacts(undefined), false);
    assert.equal(accessLogReadsFacts(settingsOf({ attributes: { remove: ['bytes'] } }).settings), false);
    assert.equal(accessLogReadsFacts(settingsOf({ filter: 'true' }).settings), true);
    assert.equal(accessLogReadsFacts(settingsOf({ attributes: { add: [{ name: 'a', expression: '1' }] } }).settings), true);
  });
});

/** What a request earned on its way: identities its policies established, LLM and MCP facts. */
function earned(): RequestFacts {
  const facts = new RequestFacts();
  facts.useCel(() => ({
    request: { method: 'POST', url: '/v1/chat', host: 'api.test', scheme: 'http', headers: { host: 'api.test' }, version: 'HTTP/1.1' },
    jwt: { sub: 'alice', groups: ['eng'] },
    apiKey: { name: 'team-blue', metadata: { tier: 'gold' } },
    basicAuth: { user: 'bob' },
    extauthz: { decision: 'ok' },
    route: { name: 'default/r' },
    backend: { name: 'service/default/api:80' },
    gateway: { name: 'default/gw' },
  }));
  facts.noteLlm({ provider: 'openai-main', requestModel: 'gpt-4o-mini', streaming: false });
  facts.noteLlm({ inputTokens: 12, outputTokens: 7, totalTokens: 19, responseModel: 'gpt-4o-mini-2024-07-18' });
  facts.noteMcp({ method: 'tools/call', target: 'weather', tool: { name: 'forecast', target: 'weather' } });
  return facts;
}

describe('writeAccessLog: the variables a request earned', () => {
  const rows: { name: string; expression: string; want: unknown }[] = [
    { name: 'jwt claims', expression: 'jwt.sub', want: 'alice' },
    { name: 'api key name', expression: 'apiKey.name', want: 'team-blue' },
    { name: 'api key metadata', expression: 'apiKey.metadata.tier', want: 'gold' },
    { name: 'basic auth user', expression: 'basicAuth.user', want: 'bob' },
    { name: 'ext authz metadata', expression: 'extauthz.decision', want: 'ok' },
    { name: 'llm provider', expression: 'llm.provider', want: 'openai-main' },
    { name: 'llm request model', expression: 'llm.requestModel', want: 'gpt-4o-mini' },
    { name: 'llm response model', expression: 'llm.responseModel', want: 'gpt-4o-mini-2024-07-18' },
    { name: 'llm token counts', expression: 'llm.inputTokens + llm.outputTokens', want: 19 },
    { name: 'llm streaming', expression: 'llm.streaming', want: false },
    { name: 'mcp method', expression: 'mcp.method', want: 'tools/call' },
    { name: 'mcp tool', expression: 'mcp.tool.name', want: 'forecast' },
    { name: 'the request as the policies saw it', expression: 'request.method', want: 'POST' },
    { name: 'response code', expression: 'response.code', want: 200 },
    { name: 'listener name', expression: 'gateway.name', want: 'default/gw' },
  ];
  for (const row of rows) {
    it(row.name, () => {
      const { logger, lines } = capture();
      const { settings, errors } = settingsOf({ attributes: { add: [{ name: 'v', expression: row.expression }] } });
      assert.deepEqual(errors, []);
      writeAccessLog(logger, settings, record(200), req, 'http', NAMES, earned());
      const got = lines[0]?.v;
      assert.deepEqual(typeof got === 'bigint' ? Number(got) : got, row.want);
    });
  }

  it('the filter sees llm.* and apiKey: only LLM requests of a key are logged', () => {
    const { logger, lines } = capture();
    const { settings } = settingsOf({ filter: 'has(llm.requestModel) && apiKey.name == "team-blue"' });
    writeAccessLog(logger, settings, record(200), req, 'http', NAMES, earned());
    writeAccessLog(logger, settings, record(200), req, 'http', NAMES, new RequestFacts());
    writeAccessLog(logger, settings, record(200), req, 'http', NAMES, undefined);
    assert.equal(lines.length, 1);
  });

  it('a variable the request did not earn drops only its pair', () => {
    const { logger, lines } = capture();
    const { settings } = settingsOf({ attributes: { add: [{ name: 'model', expression: 'llm.requestModel' }, { name: 'code', expression: 'response.code' }] } });
    writeAccessLog(logger, settings, record(404), req, 'http', NAMES, new RequestFacts());
    assert.equal(lines[0]?.model, undefined);
    assert.equal(Number(lines[0]?.code), 404);
  });
});
