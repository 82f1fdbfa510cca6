import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { McpTargetIR } from '../../src/ir/mcp.ts';
import { backend, closedPort, connect, connectSse, startEverything, startGateway, target, type Upstream } from './support.ts';

describe('MCP gateway: server-everything targets behind one endpoint', () => {
  let a: Upstream;
  let b: Upstream;
  let legacy: Upstream;
  let down: McpTargetIR;
  before(async () => {
    [a, b, legacy] = await Promise.all([startEverything(), startEverything(), startEverything('sse')]);
    down = { name: 'down', host: '127.0.0.1', port: await closedPort(), path: '/mcp', protocol: 'StreamableHTTP' };
  });
  after(async () => {
    await Promise.all([a?.stop(), b?.stop(), legacy?.stop()]);
  });

  it('merges initialize and lists, prefixes names, routes calls, reads and gets', async () => {
    const gw = await startGateway(backend([target('alpha', a), target('beta', b)], { serverName: 'tools-hub' }));
    const { client } = await connect(gw.url);
    try {
      assert.equal(client.getServerVersion()?.name, 'tools-hub');
      assert.ok(client.getServerCapabilities()?.tools);
      assert.match(client.getInstructions() ?? '', /## alpha[\s\S]*## beta/);

      const names = (await client.listTools()).tools.map((t) => t.name);
      assert.ok(names.includes('alpha_echo') && names.includes('beta_echo'), names.join(','));
      assert.ok(names.every((n) => n.startsWith('alpha_') || n.startsWith('beta_')));

      const echoed = await client.callTool({ name: 'beta_echo', arguments: { message: 'hi' } });
      assert.deepEqual(echoed.content, [{ type: 'text', text: 'Echo: hi' }]);

      const prompts = await client.listPrompts();
      assert.ok(prompts.prompts.some((p) => p.name === 'alpha_simple-prompt'));
      const prompt = await client.getPrompt({ name: 'alpha_simple-prompt' });
      assert.ok(prompt.messages.length > 0);

      const resources = await client.listResources();
      const uri = resources.resources[0]?.uri ?? '';
      assert.match(uri, /^(alpha|beta)\+/);
      const read = await client.readResource({ uri });
      assert.equal(read.contents[0]?.uri, uri);

      const templates = await client.listResourceTemplates();
      assert.ok(templates.resourceTemplates.length > 0);
      assert.ok(templates.resourceTemplates.every((t) => /^(alpha|beta)\+/.test(t.uriTemplate)));

      await assert.rejects(client.callTool({ name: 'gamma_echo', arguments: { message: 'x' } }), /Unknown tool/);
    } finally {
      await client.close();
      await gw.close();
    }
  });

  it('prefixMode Conditional with one target leaves names alone; Always prefixes even one target', async () => {
    const cases = [
      { name: 'Conditional, one target', targets: [target('alpha', a)], mode: 'Conditional' as const, tool: 'echo' },
      { name: 'Always, one target', targets: [target('alpha', a)], mode: 'Always' as const, tool: 'alpha_echo' },
    ];
    for (const c of cases) {
      const gw = await startGateway(backend(c.targets, { prefixMode: c.mode }));
      const { client } = await connect(gw.url);
      try {
        const names = (await client.listTools()).tools.map((t) => t.name);
        assert.ok(names.includes(c.tool), `${c.name}: ${names.join(',')}`);
        const result = await client.callTool({ name: c.tool, arguments: { message: c.name } });
        assert.deepEqual(result.content, [{ type: 'text', text: `Echo: ${c.name}` }], c.name);
      } finally {
        await client.close();
        await gw.close();
      }
    }
  });

  it('prefixMode Never: unprefixed names; a name served by two targets is reported as a collision', async () => {
    const gw = await startGateway(backend([target('alpha', a), target('beta', b)], { prefixMode: 'Never' }));
    const { client } = await connect(gw.url);
    try {
      const names = (await client.listTools()).tools.map((t) => t.name);
      assert.ok(names.includes('echo'));
      assert.equal(names.filter((n) => n === 'echo').length, 1, 'a colliding name is listed once');
      await assert.rejects(client.callTool({ name: 'echo', arguments: { message: 'x' } }), /served by several targets \(alpha, beta\)/);
      const resources = await client.listResources();
      assert.match(resources.resources[0]?.uri ?? '', /^(alpha|beta)\+/, 'resource URIs keep routing information');
    } finally {
      await client.close();
      await gw.close();
    }
  });

  it('FailClosed fails initialize when a target is down; FailOpen serves the healthy targets', async () => {
    const closed = await startGateway(backend([target('alpha', a), down]));
    await assert.rejects(connect(closed.url), /unavailable: down|down/);
    await closed.close();

    const open = await startGateway(backend([target('alpha', a), down], { failureMode: 'FailOpen' }));
    const { client } = await connect(open.url);
    try {
      const names = (await client.listTools()).tools.map((t) => t.name);
      assert.ok(names.includes('alpha_echo'));
      assert.ok(!names.some((n) => n.startsWith('down_')));
      await assert.rejects(client.callTool({ name: 'down_echo', arguments: { message: 'x' } }), /Unknown tool/);
    } finally {
      await client.close();
      await open.close();
    }
  });

  it('authorization filters list items and rejects calls of filtered items like unknown ones', async () => {
    const gw = await startGateway(backend([target('alpha', a), target('beta', b)], {
      authorization: [{ action: 'Allow', matchExpressions: ['mcp.tool.name == "echo" && mcp.tool.target == "alpha" || has(mcp.prompt.name) || has(mcp.resource.name)'] }],
    }));
    const { client } = await connect(gw.url);
    try {
      const names = (await client.listTools()).tools.map((t) => t.name);
      assert.deepEqual(names, ['alpha_echo']);
      const allowed = await client.callTool({ name: 'alpha_echo', arguments: { message: 'ok' } });
      assert.deepEqual(allowed.content, [{ type: 'text', text: 'Echo: ok' }]);
      const denied = await client.callTool({ name: 'beta_echo', arguments: { message: 'no' } }).then(() => 'called', (e: Error) => e.message);
      const unknown = await client.callTool({ name: 'beta_no-such-tool', arguments: {} }).then(() => 'called', (e: Error) => e.message);
      assert.equal(denied.replace('beta_echo', 'X'), unknown.replace('beta_no-such-tool', 'X'), 'denied and unknown are indistinguishable');
      assert.ok((await client.listPrompts()).prompts.length > 0);
    } finally {
      await client.close();
      await gw.close();
    }
  });

  it('authorization sees the request context (jwt claims from the runtime)', async () => {
    const gw = await startGateway(
      backend([target('alpha', a)], { authorization: [{ action: 'Require', matchExpressions: ['jwt.sub == "admin"'] }] }),
      (req) => ({ celContext: { request: { method: req.method ?? 'POST', url: req.url ?? '/' }, jwt: { sub: String(req.headers['x-test-sub'] ?? '') } } }),
    );
    const admin = await connect(gw.url, { 'x-test-sub': 'admin' });
    const guest = await connect(gw.url, { 'x-test-sub': 'guest' });
    try {
      assert.ok((await admin.client.listTools()).tools.length > 0);
      assert.equal((await guest.client.listTools()).tools.length, 0);
    } finally {
      await admin.client.close();
      await guest.client.close();
      await gw.close();
    }
  });

  it('legacy HTTP+SSE: an SSE client, and an SSE upstream next to a Streamable HTTP one', async () => {
    const gw = await startGateway(backend([target('alpha', a), target('old', legacy)]));
    const client = await connectSse(gw.url.replace(/\/mcp$/, '/sse'));
    try {
      const names = (await client.listTools()).tools.map((t) => t.name);
      assert.ok(names.includes('alpha_echo') && names.includes('old_echo'), names.join(','));
      const result = await client.callTool({ name: 'old_echo', arguments: { message: 'legacy' } });
      assert.deepEqual(result.content, [{ type: 'text', text: 'Echo: legacy' }]);
      const sum = await client.callTool({ name: 'alpha_get-sum', arguments: { a: 2, b: 3 } });
      assert.match(JSON.stringify(sum.content), /5/);
    } finally {
      await client.close();
      await gw.close();
    }
  });
});
