/**
 * Runs the official MCP conformance suite (`@modelcontextprotocol/conformance`, server scenarios)
 * against a real server-everything process, first directly and then through the gateway with that
 * process as its one target, and prints both summaries side by side. Run by hand, never in
 * `npm test` (it takes minutes):
 *
 *   node test/mcp/conformance/run.ts [--scenario <name>] [--verbose]
 *
 * `--verbose` passes the flag on and prints the suite's whole output (the checks of each scenario).
 */
import { spawn } from 'node:child_process';
import { parseArgs } from 'node:util';
import { startEverything } from '../support.ts';
import { startGateway } from '../../support/gateway.ts';
import { httpGateway } from '../../support/manifests.ts';

const CONFORMANCE = new URL('../../../node_modules/@modelcontextprotocol/conformance/dist/index.js', import.meta.url).pathname;
const SUITE_TIMEOUT_MS = 10 * 60_000;

interface ScenarioResult {
  readonly name: string;
  readonly passed: number;
  readonly failed: number;
}

/**
 * The `=== SUMMARY ===` lines (`✓ name: 1 passed, 0 failed`); a single scenario prints no
 * summary, only `Passed: 1/2, 1 failed, 0 warnings`.
 */
function parseSummary(output: string, scenario: string | undefined): ScenarioResult[] {
  const single = /^Passed: (\d+)\/\d+, (\d+) failed/mu.exec(output);
  if (scenario !== undefined && single) return [{ name: scenario, passed: Number(single[1]), failed: Number(single[2]) }];
  const summary = output.slice(output.lastIndexOf('=== SUMMARY ==='));
  const results: ScenarioResult[] = [];
  for (const m of summary.matchAll(/^[✓✗] (\S+): (\d+) passed, (\d+) failed$/gmu)) {
    results.push({ name: m[1], passed: Number(m[2]), failed: Number(m[3]) });
  }
  return results;
}

function runSuite(url: string, scenario: string | undefined, verbose: boolean): Promise<ScenarioResult[]> {
  const args = [CONFORMANCE, 'server', '--url', url, ...(scenario ? ['--scenario', scenario] : []), ...(verbose ? ['--verbose'] : [])];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], timeout: SUITE_TIMEOUT_MS });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('error', reject);
    // The suite exits 1 whenever a scenario fails; the summary is what we want either way.
    child.once('close', () => {
      if (verbose) console.log(`--- ${url}\n${output}`);
      resolve(parseSummary(output, scenario));
    });
  });
}

function report(label: string, results: readonly ScenarioResult[]): void {
  const passed = results.reduce((n, r) => n + r.passed, 0);
  const failed = results.reduce((n, r) => n + r.failed, 0);
  const failing = results.filter((r) => r.failed > 0).length;
  console.log(`${label}: ${passed} checks passed, ${failed} failed; scenarios fully passing ${results.length - failing}/${results.length}`);
  console.log(`  passing: ${results.filter((r) => r.failed === 0).map((r) => `${r.name} (${r.passed})`).join(', ') || '(none)'}`);
  console.log(`  failing: ${results.filter((r) => r.failed > 0).map((r) => `${r.name} (${r.passed}/${r.passed + r.failed})`).join(', ') || '(none)'}`);
}

const { values } = parseArgs({ options: { scenario: { type: 'string' }, verbose: { type: 'boolean', default: false } } });
const upstream = await startEverything();
try {
  const direct = await runSuite(`http://127.0.0.1:${upstream.port}/mcp`, values.scenario, values.verbose);
  const gw = await startGateway(`
${httpGateway()}---
apiVersion: switchboard.dev/v1alpha1
kind: ProxyBackend
metadata: { name: everything }
spec:
  mcp:
    targets: [{ name: everything, static: { host: 127.0.0.1, port: ${upstream.port} } }]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: mcp }
spec:
  parentRefs: [{ name: gw }]
  rules:
    - matches: [{ path: { type: PathPrefix, value: /mcp } }]
      backendRefs: [{ group: switchboard.dev, kind: ProxyBackend, name: everything }]
`);
  try {
    const gateway = await runSuite(gw.url(80, '/mcp'), values.scenario, values.verbose);
    report('server-everything directly', direct);
    report('through the gateway (one target)', gateway);
    const differing = direct.filter((d) => {
      const g = gateway.find((r) => r.name === d.name);
      return g === undefined || g.passed !== d.passed || g.failed !== d.failed;
    });
    console.log(`scenarios whose result differs: ${differing.map((d) => d.name).join(', ') || '(none)'}`);
  } finally {
    await gw.close();
  }
} finally {
  await upstream.stop();
}
