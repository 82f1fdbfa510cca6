import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseLogFilter } from '../../common/log-filter.ts';
import { createLogger, type Logger } from '../../common/logger.ts';
import type { Backend } from '../../ir/types.ts';
import type { HandlerDeps } from './handlers.ts';
import { inModule } from './in-module.ts';

describe('inModule', () => {
  const seen: Logger[] = [];
  const factory = inModule('mcp', (_backend, deps) => {
    seen.push(deps.logger);
    return undefined;
  });
  const backend = {} as Backend;
  it('hands the factory a logger at the module\'s level, made once', () => {
    const lines: string[] = [];
    const root = createLogger({ level: 'warn', filter: parseLogFilter('warn,mcp=debug'), destination: { write: (l: string) => lines.push(l) } });
    const deps: HandlerDeps = { logger: root };
    factory(backend, deps);
    factory(backend, deps);
    assert.equal(seen[0], seen[1]);
    assert.notEqual(seen[0], root);
    seen[0]!.debug('from mcp');
    root.debug('from root');
    assert.deepEqual(lines.map((l) => (JSON.parse(l) as { msg: string }).msg), ['from mcp']);
  });
  it('passes the deps through when the filter names no level for the module', () => {
    const root = createLogger({ level: 'info', destination: { write: () => undefined } });
    factory(backend, { logger: root });
    assert.equal(seen.at(-1), root);
  });
});
