import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { backend, connect, startEverything, startGateway, target, type Upstream } from './support.ts';

describe('MCP gateway: two server-everything targets behind one endpoint', () => {
  let a: Upstream;
  let b: Upstream;
  before(async () => {
    [a, b] = await Promise.all([startEverything(), startEverything()]);
  });
  after(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
  });

  it('merges initialize and lists, prefixes names, routes calls, reads and gets', async () => {
    const gw = await startGateway(backend([target('alpha', a), target('beta', b)], { serverName: 'tools-hub' }));
    const { client } = await connect(gw.url);
    try {
      assert.equal(client.getServerVersion()?.name, 'tools-hub');
      assert.ok(client.getServerCapabilities()?.tools);
      assert.match(client.getInstructions() ?? '', /## alpha[\s\S]*## beta/);

      const tools = await client.listTools();
      const names = tools.tools.map((t) => t.name);
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
      assert.ok(templates.resourceTemplates.every((t) => /^(alpha|beta)\+/.test(t.uriTemplate)));

      await assert.rejects(client.callTool({ name: 'gamma_echo', arguments: { message: 'x' } }), /Unknown tool/);
    } finally {
      await client.close();
      await gw.close();
    }
  });
});
