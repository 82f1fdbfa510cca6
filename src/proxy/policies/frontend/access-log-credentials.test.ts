import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Logger } from '../../../common/logger.ts';
import type { DownstreamRequest } from '../../http/downstream.ts';
import { writeAccessLog } from './access-log.ts';
import { compileFrontend } from './compile.ts';

describe('writeAccessLog and credentials', () => {
  const req = {
    method: 'GET', url: '/v1/chat', httpVersion: '1.1', socket: { remoteAddress: '10.1.2.3', remotePort: 5555 },
    headers: { host: 'api.test', authorization: 'Bearer client-token-123456', cookie: 'session=abcdef123456', 'x-api-key': 'k-123456789', 'x-team': 'blue' },
  } as unknown as DownstreamRequest;
  const record = { method: 'GET', path: '/v1/chat', status: 200, durationMs: 1, route: 'default/r', backend: 'service/default/api:80', bytes: 1 };

  function logged(expressions: Record<string, string>): Record<string, unknown> {
    const lines: Record<string, unknown>[] = [];
    const logger = { isLevelEnabled: () => true, info: (fields: Record<string, unknown>) => lines.push(fields) } as unknown as Logger;
    const compiled = compileFrontend({ accessLog: { attributes: { add: Object.entries(expressions).map(([name, expression]) => ({ name, expression })) } }, sources: {} }, (m) => assert.fail(m));
    writeAccessLog(logger, compiled?.accessLog, record, req, 'http', { gateway: '', listener: '', route: '', backend: '' }, undefined);
    writeAccessLog(logger, undefined, record, req, 'http', { gateway: '', listener: '', route: '', backend: '' }, undefined);
    assert.equal(lines.length, 2);
    assert.ok(!JSON.stringify(lines[1]).includes('client-token'), 'the default fields carry no header');
    return lines[0];
  }

  it('a whole header map is logged with its credential headers redacted', () => {
    const line = logged({ hdrs: 'request.headers' });
    assert.deepEqual(line.hdrs, { host: 'api.test', authorization: '[redacted]', cookie: '[redacted]', 'x-api-key': '[redacted]', 'x-team': 'blue' });
  });

  it('a header asked for by name is logged as asked (the operator chose it)', () => {
    assert.equal(logged({ team: 'request.headers["x-team"]' }).team, 'blue');
  });
});
