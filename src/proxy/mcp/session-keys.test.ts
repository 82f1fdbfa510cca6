import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Logger } from '../../common/logger.ts';
import type { Listener, ProxyConfig } from '../../ir/types.ts';
import { pino } from 'pino';
import { silentLogger } from '../../common/logger.ts';
import { GatewaySessionKeys, SessionKeySelector } from './session-keys.ts';

const A = 'aa'.repeat(32);
const B = 'bb'.repeat(32);
const ENV = 'ee'.repeat(32);

function config(keys: Readonly<Record<string, string | undefined>>): ProxyConfig {
  const listeners: Listener[] = Object.entries(keys).map(([gateway, sessionKey]) => {
    const [namespace = '', name = ''] = gateway.split('/');
    return { key: `${gateway}/http`, gateway: { namespace, name }, sectionName: 'http', hostname: null, protocol: 'HTTP', routes: [], ...(sessionKey ? { sessionKey } : {}) };
  });
  return { version: 'v', binds: [{ key: 'bind/80', port: 80, protocol: 'HTTP', listeners }], routes: {}, backends: {} };
}

function counting(): { logger: Logger; warnings: () => number } {
  let warnings = 0;
  const logger: Logger = pino({ level: 'warn' }, { write: () => { warnings++; } });
  return { logger, warnings: () => warnings };
}

describe('GatewaySessionKeys', () => {
  it('holds each served Gateway\'s key, follows swaps, and keeps an unchanged key\'s Buffer', () => {
    const keys = new GatewaySessionKeys();
    keys.update(config({ 'ns/a': A, 'ns/b': B, 'ns/none': undefined }));
    assert.equal(keys.get('ns/a')?.toString('hex'), A);
    assert.equal(keys.get('ns/b')?.toString('hex'), B);
    assert.equal(keys.get('ns/none'), undefined);
    const before = keys.get('ns/a');
    keys.update(config({ 'ns/a': A }));
    assert.equal(keys.get('ns/a'), before);
    assert.equal(keys.get('ns/b'), undefined, 'a Gateway gone from the config takes its key along');
  });
});

describe('SessionKeySelector: SESSION_KEY > the Gateway\'s key > a random per-process key', () => {
  const gateways = new GatewaySessionKeys();
  gateways.update(config({ 'ns/a': A, 'ns/b': B }));
  const rows: { name: string; env: NodeJS.ProcessEnv; gateway: string | undefined; want: string | 'random' }[] = [
    { name: 'SESSION_KEY wins over the Gateway\'s key', env: { SESSION_KEY: ENV }, gateway: 'ns/a', want: ENV },
    { name: 'SESSION_KEY for a Gateway without a key', env: { SESSION_KEY: ENV }, gateway: 'ns/none', want: ENV },
    { name: 'the Gateway\'s key without SESSION_KEY', env: {}, gateway: 'ns/a', want: A },
    { name: 'each Gateway its own key', env: {}, gateway: 'ns/b', want: B },
    { name: 'an empty SESSION_KEY counts as unset', env: { SESSION_KEY: '' }, gateway: 'ns/b', want: B },
    { name: 'a Gateway without a key: random', env: {}, gateway: 'ns/none', want: 'random' },
    { name: 'no Gateway (a handler driven directly): random', env: {}, gateway: undefined, want: 'random' },
  ];
  for (const row of rows) {
    it(row.name, () => {
      const { logger, warnings } = counting();
      const selector = new SessionKeySelector(undefined, row.env, gateways, logger);
      const key = selector.forGateway(row.gateway);
      if (row.want !== 'random') {
        assert.equal(key.toString('hex'), row.want);
        assert.equal(warnings(), 0, 'nothing is warned while a real key is used');
        return;
      }
      assert.equal(key.length, 32);
      assert.ok(![A, B, ENV].includes(key.toString('hex')));
      assert.equal(selector.forGateway(row.gateway), key, 'the random key is made once');
      assert.equal(warnings(), 1, 'and warned about once');
    });
  }

  it('an explicit key wins over everything; a malformed SESSION_KEY throws', () => {
    const explicit = Buffer.alloc(32, 7);
    assert.equal(new SessionKeySelector(explicit, { SESSION_KEY: ENV }, gateways, silentLogger).forGateway('ns/a'), explicit);
    assert.throws(() => new SessionKeySelector(undefined, { SESSION_KEY: 'abc' }, gateways, silentLogger), /64 hexadecimal/);
  });
});
