/**
 * Secret-parsed JSON stays redacted in /config_dump after live edits (issue 15 follow-up): the
 * real CLI with API keys whose Secret entries carry JSON `metadata` (a key name, a number, a
 * boolean: no recorded string, so only the ledger's tree identity redacts them). A new Service
 * (which clears the translator's memos, so the policy is read again and the route re-made equal to
 * the one kept) and a route edit later, the dump still shows none of them.
 * src/controller/translate/incremental-secret-dump.test.ts has the same cases in process.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { httpGateway, prefixRoute, routeTrafficPolicy, service } from '../support/manifests.ts';
import { startHostileGateway, type HostileGateway } from './harness.ts';

const CLIENT_KEY = 'ck-hostileTreeMarker0123456789';
const MARKERS = [CLIENT_KEY, 'hostileTreeKeyName', '918273645', 'hostile-tree-plan'];
const CLOSED = { host: '127.0.0.1', port: 9 };

const yaml = httpGateway(0).replace('port: 0', 'port: {{listener.port}}') + service('svc', CLOSED) + `
---
apiVersion: v1
kind: Secret
metadata: { name: client-keys, namespace: default }
stringData:
  app: '${JSON.stringify({ key: CLIENT_KEY, metadata: { hostileTreeKeyName: 'hostile-tree-plan', quota: 918273645, vip: true } })}'
` + prefixRoute('keyed', '/keyed', 'svc') + routeTrafficPolicy('client-auth', 'keyed', 'apiKeyAuthentication: { secretRef: { name: client-keys } }') + prefixRoute('plain', '/plain', 'svc');

describe('hostile: Secret-parsed JSON metadata stays redacted in /config_dump after edits', () => {
  let gw: HostileGateway;
  before(async () => {
    gw = await startHostileGateway(yaml);
  });
  after(async () => { await gw?.close(); });

  /** Writes `edit.yaml` and waits until the dump shows `sign` (the edit was applied); returns the dump. */
  async function edit(text: string, sign: string): Promise<string> {
    writeFileSync(join(gw.configDir, 'edit.yaml'), text);
    let dump = '';
    await gw.waitFor(`the edit showing ${sign}`, async () => {
      dump = (await gw.admin('/config_dump')).text;
      return dump.includes(sign);
    });
    return dump;
  }

  function assertRedacted(dump: string, step: string): void {
    assert.match(dump, /\/keyed/, `${step}: the keyed route is in the dump`);
    assert.match(dump, /"metadata": "\[redacted\]"/, `${step}: the metadata is shown redacted`);
    for (const marker of MARKERS) assert.ok(!dump.includes(marker), `${step}: /config_dump shows ${JSON.stringify(marker)}`);
  }

  it('at start, after a new Service and route, and after a route edit', async () => {
    assertRedacted((await gw.admin('/config_dump')).text, 'start');
    assertRedacted(await edit(service('other', CLOSED) + prefixRoute('added', '/added-one', 'other'), '/added-one'), 'a Service and a route added');
    assertRedacted(await edit(service('other', CLOSED) + prefixRoute('added', '/added-two', 'other'), '/added-two'), 'a route edited');
  });
});
