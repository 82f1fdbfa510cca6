import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Logger } from '../../../common/logger.ts';
import type { FrontendPolicy } from '../../../ir/policy.ts';
import type { DownstreamRequest } from '../../http/downstream.ts';
import { writeAccessLog } from './access-log.ts';
import { compileFrontend } from './compile.ts';

function capture(): { logger: Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const logger = { isLevelEnabled: () => true, info: (fields: Record<string, unknown>) => lines.push(fields) } as unknown as Logger;
  return { logger, lines };
}

const req = { method: 'GET', url: '/v1/chat?x=1', headers: { host: 'api.test', 'x-team': 'blue' }, httpVersion: '1.1', socket: { remoteAddress: '10.1.2.3', remotePort: 5555 } } as unknown as DownstreamRequest;
const record = (status: number) => ({ method: 'GET', path: '/v1/chat', status, durationMs: 1.5, route: 'default/r', backend: 'service/default/api:80', bytes: 10 });
const settingsOf = (accessLog: FrontendPolicy['accessLog']) => {
  const errors: string[] = [];
  const compiled = compileFrontend({ accessLog, sources: {} }, (m) => errors.push(m));
  return { settings: compiled?.accessLog, errors };
};

describe('writeAccessLog', () => {
  it('logs only what the filter lets through', () => {
    const { logger, lines } = capture();
    const { settings } = settingsOf({ filter: 'response.code >= 500' });
    writeAccessLog(logger, settings, record(200), req, 'http');
    writeAccessLog(logger, settings, record(503), req, 'http');
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
    writeAccessLog(logger, settings, record(200), req, 'http');
    assert.deepEqual(lines, [{ method: 'GET', path: '/v1/chat', status: 200, route: 'default/r', backend: 'service/default/api:80', team: 'blue', client: '10.1.2.3' }]);
  });

  it('reports an expression that does not compile and keeps logging', () => {
    const { logger, lines } = capture();
    const { settings, errors } = settingsOf({ attributes: { add: [{ name: 'bad', expression: 'request.(' }] } });
    assert.equal(errors.length, 1);
    writeAccessLog(logger, settings, record(200), req, 'http');
    assert.equal(lines.length, 1);
  });
});
