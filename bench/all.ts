/**
 * `npm run bench`: every benchmark suite, one after another, each in its own process (they start
 * their own gateways and upstreams on free ports and print markdown for bench/RESULTS.md):
 *
 *   hot-path  bench/run.ts       direct vs nginx vs Switchboard, plain proxying (issue 2)
 *   policies  bench/policies.ts  a route with the issue-5 policy stack vs a plain one
 *   llm       bench/llm.ts       translation vs a plain route, streaming CPU per event, added TTFT (issue 4)
 *   mcp       bench/mcp.ts       MCP tools/call and a three-target tools/list vs a plain route (issue 6)
 *   tracing   bench/tracing.ts   the policy stack with frontend tracing off, sampled 1 % and 100 % (issue 14)
 *
 *   node bench/all.ts [--suites hot-path,policies,llm,mcp,tracing]
 *
 * Options of one suite: run its script directly (see bench/README.md). Not part of npm test.
 */
import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';

const SUITES: Readonly<Record<string, readonly string[]>> = {
  'hot-path': ['bench/run.ts'],
  policies: ['bench/policies.ts'],
  llm: ['bench/llm.ts'],
  mcp: ['bench/mcp.ts'],
  tracing: ['bench/tracing.ts'],
};

const { values } = parseArgs({ options: { suites: { type: 'string', default: Object.keys(SUITES).join(',') } } });
const chosen = values.suites.split(',').map((s) => s.trim()).filter(Boolean);
const unknown = chosen.filter((s) => !(s in SUITES));
if (unknown.length > 0) {
  console.error(`unknown suite(s) ${unknown.join(', ')}; choose from ${Object.keys(SUITES).join(', ')}`);
  process.exit(2);
}

const root = resolve(import.meta.dirname, '..');
let failed = 0;
for (const suite of chosen) {
  console.log(`\n## ${suite}\n`);
  const r = spawnSync(process.execPath, SUITES[suite], { cwd: root, stdio: 'inherit' });
  if (r.status !== 0) {
    failed++;
    console.error(`suite ${suite} failed (exit ${r.status ?? r.signal})`);
  }
}
process.exit(failed > 0 ? 1 : 0);
