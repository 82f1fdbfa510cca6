import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as delay } from 'node:timers/promises';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import type { McpTargetIR } from '../../src/ir/mcp.ts';
import { startResourceFixture, type ResourceFixture } from './fixtures/resource-server.ts';
import { backend, connect, startGateway } from './support.ts';

function fixtureTarget(f: ResourceFixture): McpTargetIR {
  return { name: f.label, host: '127.0.0.1', port: f.port, path: '/mcp', protocol: 'StreamableHTTP' };
}

async function readText(client: Client, uri: string): Promise<{ uri: string; text: string } | string> {
  try {
    const read = await client.readResource({ uri });
    const first = read.contents[0] as { uri: string; text?: string };
    return { uri: first.uri, text: first.text ?? '' };
  } catch (error) {
    return (error as Error).message;
  }
}

/** Collects resources/updated URIs the client receives; `waitFor` polls for one (bounded). */
function updates(client: Client): { seen: string[]; waitFor(uri: string): Promise<boolean> } {
  const seen: string[] = [];
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void seen.push(n.params.uri));
  return {
    seen,
    async waitFor(uri) {
      for (let i = 0; i < 50 && !seen.includes(uri); i++) await delay(50);
      return seen.includes(uri);
    },
  };
}

describe('MCP gateway: resource URIs without a target prefix', () => {
  let alpha: ResourceFixture;
  let beta: ResourceFixture;
  before(async () => {
    [alpha, beta] = await Promise.all([startResourceFixture('alpha'), startResourceFixture('beta')]);
  });
  after(async () => {
    await Promise.all([alpha?.stop(), beta?.stop()]);
  });

  it('several targets: an unprefixed URI goes to the target that lists it or has a template for it', async () => {
    const gw = await startGateway(backend([fixtureTarget(alpha), fixtureTarget(beta)]));
    const { client } = await connect(gw.url);
    try {
      const listed = (await client.listResources()).resources.map((r) => r.uri).sort();
      assert.deepEqual(listed, ['alpha+alpha://readme', 'alpha+shared://common', 'beta+beta://readme', 'beta+shared://common'], 'lists keep the prefix');
      const cases = [
        { name: 'prefixed URI', uri: 'beta+beta://readme', want: { uri: 'beta+beta://readme', text: 'readme of beta' } },
        { name: 'unprefixed, listed by one target', uri: 'alpha://readme', want: { uri: 'alpha://readme', text: 'readme of alpha' } },
        { name: 'unprefixed, matches one target\'s template', uri: 'beta://items/7', want: { uri: 'beta://items/7', text: 'item 7 of beta' } },
        { name: 'unprefixed, listed by both targets: not routable', uri: 'shared://common', want: 'MCP error -32002: Resource not found' },
        { name: 'prefixed form of the shared URI', uri: 'alpha+shared://common', want: { uri: 'alpha+shared://common', text: 'common of alpha' } },
        { name: 'unprefixed, served by nobody', uri: 'gamma://readme', want: 'MCP error -32002: Resource not found' },
      ];
      for (const c of cases) assert.deepEqual(await readText(client, c.uri), c.want, c.name);
    } finally {
      await client.close();
      await gw.close();
    }
  });

  it('authorization: targets the caller may not read are not candidates, and forbidden looks like unknown', async () => {
    const gw = await startGateway(backend([fixtureTarget(alpha), fixtureTarget(beta)], {
      authorization: [{ action: 'Allow', matchExpressions: ['has(mcp.resource.target) && mcp.resource.target == "beta"'] }],
    }));
    const { client } = await connect(gw.url);
    try {
      assert.deepEqual(await readText(client, 'shared://common'), { uri: 'shared://common', text: 'common of beta' }, 'only beta may serve it');
      assert.equal(await readText(client, 'alpha://readme'), 'MCP error -32002: Resource not found');
      assert.equal(await readText(client, 'alpha+alpha://readme'), 'MCP error -32002: Resource not found');
    } finally {
      await client.close();
      await gw.close();
    }
  });

  it('subscribe/unsubscribe route unprefixed URIs; updates come back in the form the client subscribed with', async () => {
    const gw = await startGateway(backend([fixtureTarget(alpha), fixtureTarget(beta)]));
    const { client } = await connect(gw.url);
    const got = updates(client);
    try {
      await client.subscribeResource({ uri: 'alpha://readme' });
      await client.subscribeResource({ uri: 'beta+beta://readme' });
      assert.ok([...alpha.subscriptions].some((s) => s.endsWith(' alpha://readme')), 'alpha saw the subscription');
      assert.ok([...beta.subscriptions].some((s) => s.endsWith(' beta://readme')), 'beta saw the subscription');

      await client.callTool({ name: 'alpha_touch', arguments: { uri: 'alpha://readme', via: 'request' } });
      assert.ok(await got.waitFor('alpha://readme'), `unprefixed subscription, update on the call's stream: ${got.seen.join(', ')}`);
      await client.callTool({ name: 'beta_touch', arguments: { uri: 'beta://readme', via: 'stream' } });
      assert.ok(await got.waitFor('beta+beta://readme'), `prefixed subscription, update on the GET stream: ${got.seen.join(', ')}`);
      await client.callTool({ name: 'alpha_touch', arguments: { uri: 'alpha://readme', via: 'stream' } });
      for (let i = 0; i < 50 && got.seen.filter((u) => u === 'alpha://readme').length < 2; i++) await delay(50);
      assert.equal(got.seen.filter((u) => u === 'alpha://readme').length, 2, `unprefixed subscription, update on the GET stream: ${got.seen.join(', ')}`);
      assert.ok(!got.seen.includes('alpha+alpha://readme'), 'never the other form');

      await client.unsubscribeResource({ uri: 'alpha://readme' });
      assert.ok(![...alpha.subscriptions].some((s) => s.endsWith(' alpha://readme')), 'alpha saw the unsubscription');
      await client.callTool({ name: 'alpha_touch', arguments: { uri: 'alpha://readme', via: 'request' } });
      assert.ok(await got.waitFor('alpha+alpha://readme'), 'after unsubscribing, updates use the listed (prefixed) form');
    } finally {
      await client.close();
      await gw.close();
    }
  });

  it('2026-07-28 subscriptions/listen: unprefixed URIs are routed and their updates keep that form', async () => {
    const gw = await startGateway(backend([fixtureTarget(alpha), fixtureTarget(beta)]));
    const modern = new ModernClient({ name: 'modern-test', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
    const seen: string[] = [];
    modern.setNotificationHandler('notifications/resources/updated', (n) => void seen.push(n.params.uri));
    await modern.connect(new ModernTransport(new URL(gw.url)));
    const legacy = await connect(gw.url);
    try {
      const subscription = await modern.listen({ resourceSubscriptions: ['beta://readme', 'alpha+alpha://readme', 'shared://common'] });
      assert.deepEqual(subscription.honoredFilter.resourceSubscriptions, ['beta://readme', 'alpha+alpha://readme'], 'the ambiguous URI is left out');
      // Another client's call makes each fixture notify every session subscribed to the URI
      // (the listen stream's upstream GET may still be opening: retried, bounded).
      for (let i = 0; i < 40 && !(seen.includes('beta://readme') && seen.includes('alpha+alpha://readme')); i++) {
        await legacy.client.callTool({ name: 'beta_touch', arguments: { uri: 'beta://readme', via: 'subscribers' } });
        await legacy.client.callTool({ name: 'alpha_touch', arguments: { uri: 'alpha://readme', via: 'subscribers' } });
        await delay(50);
      }
      assert.ok(seen.includes('beta://readme'), `unprefixed subscription: ${seen.join(', ')}`);
      assert.ok(seen.includes('alpha+alpha://readme'), `prefixed subscription: ${seen.join(', ')}`);
      assert.ok(!seen.includes('beta+beta://readme'), 'never the other form');
      await subscription.close();
    } finally {
      await legacy.client.close();
      await modern.close();
      await gw.close();
    }
  });

  it('one target: every unprefixed URI is routed to it as is (its own answer decides)', async () => {
    const gw = await startGateway(backend([fixtureTarget(alpha)]));
    const { client } = await connect(gw.url);
    try {
      const cases = [
        { name: 'listed URI', uri: 'alpha://readme', want: { uri: 'alpha://readme', text: 'readme of alpha' } },
        { name: 'prefixed URI still works', uri: 'alpha+alpha://readme', want: { uri: 'alpha+alpha://readme', text: 'readme of alpha' } },
        { name: 'unknown URI: the target\'s own error', uri: 'nothing://here', want: 'MCP error -32002: Resource not found' },
      ];
      for (const c of cases) assert.deepEqual(await readText(client, c.uri), c.want, c.name);
      await client.subscribeResource({ uri: 'shared://common' });
      assert.ok([...alpha.subscriptions].some((s) => s.endsWith(' shared://common')));
      await client.unsubscribeResource({ uri: 'shared://common' });
      assert.ok(![...alpha.subscriptions].some((s) => s.endsWith(' shared://common')));
    } finally {
      await client.close();
      await gw.close();
    }
  });
});
