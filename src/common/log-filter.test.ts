import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseLogFilter } from './log-filter.ts';

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
});
