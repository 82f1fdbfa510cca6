import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KubeObject } from '../../api/gateway/object.ts';
import { redactedJson } from '../../embedded/admin-server.ts';
import { redactionsFor, sliceForGateways } from '../../distribute/remote/split.ts';
import { translate } from './index.ts';
import { sessionKeySecretName } from './session-key.ts';

const KEY = 'a1'.repeat(32);

function objects(extra: KubeObject[]): KubeObject[] {
  return [
    { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'GatewayClass', metadata: { name: 'switchboard' }, spec: { controllerName: 'switchboard.dev/gateway-controller' } },
    ...['gw', 'other'].map((name): KubeObject => ({
      apiVersion: 'gateway.networking.k8s.io/v1', kind: 'Gateway', metadata: { name, namespace: 'default' },
      spec: { gatewayClassName: 'switchboard', listeners: [{ name: 'http', port: name === 'gw' ? 80 : 81, protocol: 'HTTP' }] },
    })),
    ...extra,
  ];
}

const keySecret = (name: string, key: string, how: 'data' | 'stringData' = 'data'): KubeObject => ({
  apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace: 'default' },
  [how]: { key: how === 'data' ? Buffer.from(key).toString('base64') : key },
});

const listenerOf = (config: ReturnType<typeof translate>['config'], gateway: string) =>
  config.binds.flatMap((b) => b.listeners).find((l) => l.gateway.name === gateway);

describe('session keys in the translator', () => {
  const rows: { name: string; secrets: KubeObject[]; gw: string | undefined }[] = [
    { name: 'the Secret <gateway>-session-key gives its listeners the key', secrets: [keySecret('gw-session-key', KEY)], gw: KEY },
    { name: 'stringData and upper case are accepted, lower-cased', secrets: [keySecret('gw-session-key', KEY.toUpperCase(), 'stringData')], gw: KEY },
    { name: 'no Secret: no key', secrets: [], gw: undefined },
    { name: 'a key of the wrong length is not used', secrets: [keySecret('gw-session-key', 'ab'.repeat(16))], gw: undefined },
    { name: 'a Secret of another name is not read', secrets: [keySecret('gw-key', KEY)], gw: undefined },
  ];
  for (const row of rows) {
    it(row.name, () => {
      const { config } = translate(objects(row.secrets));
      assert.equal(listenerOf(config, 'gw')?.sessionKey, row.gw);
      assert.equal(listenerOf(config, 'other')?.sessionKey, undefined, 'another Gateway never gets this key');
    });
  }

  it('the key is Secret data: located for /config_dump redaction and listed for log scrubbing', () => {
    const result = translate(objects([keySecret('gw-session-key', KEY)]));
    assert.ok(result.secretValues.includes(KEY));
    const dump = redactedJson(result.config, result.secretPaths);
    assert.ok(!dump.includes(KEY), 'the key is redacted');
  });

  it('travels only to the proxies of its Gateway (binds are cut per Gateway), and only they scrub it', () => {
    const result = translate(objects([keySecret('gw-session-key', KEY)]));
    const text = (gateway: string) => [...sliceForGateways(result.config, [{ namespace: 'default', name: gateway }]).resources.values()].map((r) => r.json).join('\n');
    assert.ok(text('gw').includes(KEY));
    assert.ok(!text('other').includes(KEY), 'another Gateway\'s proxy is not sent the key');
    const slice = (gateway: string) => sliceForGateways(result.config, [{ namespace: 'default', name: gateway }]).resources;
    assert.ok(redactionsFor(slice('gw'), result.secretValues).includes(KEY));
    assert.ok(!redactionsFor(slice('other'), result.secretValues).includes(KEY));
  });

  it('names the Secret <gateway>-session-key, within the 253-character bound', () => {
    assert.equal(sessionKeySecretName('gw'), 'gw-session-key');
    const long = 'g'.repeat(250);
    const name = sessionKeySecretName(long);
    assert.ok(name.length <= 253 && name.endsWith('-session-key'));
    assert.notEqual(name, sessionKeySecretName(`${'g'.repeat(249)}h`), 'two long names keep distinct Secrets');
  });
});
