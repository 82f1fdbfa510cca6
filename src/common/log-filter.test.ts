import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CONTROLLER_LOG_MODULES, parseLogFilter, RUN_LOG_MODULES } from './log-filter.ts';

describe('parseLogFilter', () => {
  const CASES: ReadonlyArray<{ name: string; filter: string; level: string | undefined; modules: Record<string, string> }> = [
    { name: 'a level alone', filter: 'warn', level: 'warn', modules: {} },
    { name: 'a level and modules', filter: 'warn, mcp=debug ,llm=error', level: 'warn', modules: { mcp: 'debug', llm: 'error' } },
    { name: 'modules alone', filter: 'xds=trace', level: undefined, modules: { xds: 'trace' } },
    { name: 'off is silent; case does not matter', filter: 'INFO,forward=off', level: 'info', modules: { forward: 'silent' } },
    { name: 'later entries win', filter: 'info,mcp=debug,error,mcp=warn', level: 'error', modules: { mcp: 'warn' } },
    { name: 'empty entries are skipped', filter: ',info,,', level: 'info', modules: {} },
  ];
  for (const c of CASES) {
    it(c.name, () => {
      const parsed = parseLogFilter(c.filter);
      assert.equal(parsed.level, c.level);
      assert.deepEqual(Object.fromEntries(parsed.modules), c.modules);
    });
  }
  const REFUSED: ReadonlyArray<{ name: string; filter: string; error: RegExp }> = [
    { name: 'an unknown level', filter: 'verbose', error: /entry "verbose": level must be one of/ },
    { name: 'an unknown module', filter: 'info,mcpp=debug', error: /entry "mcpp=debug": module must be one of xds, mcp, llm, forward/ },
    { name: 'a module without a level', filter: 'mcp=', error: /entry "mcp=": level/ },
    { name: 'a filter past the bound', filter: 'info,'.repeat(300), error: /longer than 1024/ },
  ];
  for (const c of REFUSED) it(`refuses ${c.name}`, () => assert.throws(() => parseLogFilter(c.filter), c.error));

  const PROCESSES: ReadonlyArray<{ name: string; known: Parameters<typeof parseLogFilter>[1]; filter: string; modules?: Record<string, string>; error?: RegExp }> = [
    { name: 'run: the file source and the handlers', known: RUN_LOG_MODULES, filter: 'source=debug,mcp=warn', modules: { source: 'debug', mcp: 'warn' } },
    { name: 'run has no controller connection', known: RUN_LOG_MODULES, filter: 'xds=debug', error: /module must be one of source, mcp, llm, forward$/ },
    { name: 'controller: its parts, xds being the config server', known: CONTROLLER_LOG_MODULES, filter: 'kube=debug,status=warn,provision=info,leader=error,xds=trace', modules: { kube: 'debug', status: 'warn', provision: 'info', leader: 'error', xds: 'trace' } },
    { name: 'the controller runs no backend handlers', known: CONTROLLER_LOG_MODULES, filter: 'llm=debug', error: /module must be one of kube, status, provision, leader, xds$/ },
    { name: 'the proxy (the default) has no kube source', known: undefined, filter: 'kube=debug', error: /module must be one of xds, mcp, llm, forward$/ },
  ];
  for (const c of PROCESSES) {
    it(`modules of a process: ${c.name}`, () => {
      if (c.error) assert.throws(() => parseLogFilter(c.filter, c.known), c.error);
      else assert.deepEqual(Object.fromEntries(parseLogFilter(c.filter, c.known).modules), c.modules);
    });
  }
});
