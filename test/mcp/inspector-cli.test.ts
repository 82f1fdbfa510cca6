import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { startGateway, type GatewayHarness } from '../support/gateway.ts';
import { startEverything, type Upstream } from './support.ts';
import { httpGateway, mcpToolsBackend } from '../support/manifests.ts';

/**
 * The MCP Inspector's CLI mode (`mcp-inspector --cli`, @modelcontextprotocol/inspector 2.x, which
 * speaks through the v2 client packages) as a client of a listening gateway with two
 * server-everything targets. Run asynchronously: the gateway lives in this process.
 */
const INSPECTOR = new URL('../../node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js', import.meta.url).pathname;
const run = promisify(execFile);

describe('MCP Inspector CLI through the gateway', () => {
  let alpha: Upstream;
  let beta: Upstream;
  let gw: GatewayHarness;
  let home: string;

  before(async () => {
    [alpha, beta, home] = await Promise.all([startEverything(), startEverything(), mkdtemp(join(tmpdir(), 'sb-inspector-'))]);
    gw = await startGateway(`
${httpGateway()}${mcpToolsBackend({ alpha: alpha.port, beta: beta.port })}`);
    assert.deepEqual(gw.applyErrors, []);
  });

  after(async () => {
    await gw?.close();
    await Promise.all([alpha?.stop(), beta?.stop(), home && rm(home, { recursive: true, force: true })]);
  });

  /** One CLI invocation; its JSON output, or the failure with stderr. */
  async function inspect(args: readonly string[]): Promise<Record<string, unknown>> {
    // A private HOME and catalog: the CLI keeps a server catalog under ~/.mcp-inspector.
    const env = { ...process.env, HOME: home, MCP_CATALOG_PATH: join(home, 'mcp.json') };
    try {
      const { stdout } = await run(process.execPath, [INSPECTOR, '--cli', ...args], { env, timeout: 60_000, encoding: 'utf8' });
      return JSON.parse(stdout) as Record<string, unknown>;
    } catch (error) {
      const failed = error as { stderr?: string; message: string };
      throw new Error(`mcp-inspector --cli ${args.join(' ')} failed: ${failed.stderr || failed.message}`, { cause: error });
    }
  }

  const cases = [
    { name: 'Streamable HTTP', url: () => gw.url(80, '/mcp'), transport: [] as string[] },
    { name: 'legacy HTTP+SSE', url: () => gw.url(80, '/mcp'), transport: ['--transport', 'sse'] },
  ];
  for (const c of cases) {
    it(`${c.name}: lists the merged tools and calls one by its prefixed name`, async () => {
      const listed = await inspect([c.url(), ...c.transport, '--method', 'tools/list']);
      const names = (listed.tools as { name: string }[]).map((t) => t.name);
      assert.ok(names.includes('alpha_echo') && names.includes('beta_echo'), names.join(', '));
      assert.ok(names.every((n) => n.startsWith('alpha_') || n.startsWith('beta_')), names.join(', '));

      const called = await inspect([c.url(), ...c.transport, '--method', 'tools/call', '--tool-name', 'beta_echo', '--tool-arg', `message=${c.name}`]);
      assert.deepEqual(called.content, [{ type: 'text', text: `Echo: ${c.name}` }]);
    });
  }

  it('reads a resource by the URI the list gave it, and an unknown tool is an error', async () => {
    const listed = await inspect([gw.url(80, '/mcp'), '--method', 'resources/list']);
    const uri = (listed.resources as { uri: string }[])[0]?.uri ?? '';
    assert.match(uri, /^(alpha|beta)\+/);
    const read = await inspect([gw.url(80, '/mcp'), '--method', 'resources/read', '--uri', uri]);
    assert.equal((read.contents as { uri: string }[])[0]?.uri, uri);
    await assert.rejects(inspect([gw.url(80, '/mcp'), '--method', 'tools/call', '--tool-name', 'gamma_echo', '--tool-arg', 'message=x']), /Unknown tool|gamma_echo/);
  });
});
