import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { UsageError } from '../args.ts';
import { DEFAULT_TOKEN_FILE, parseProxyArgs, type ProxyOptions } from './proxy-args.ts';

const BASE = ['--controller', 'https://switchboard.system:9978', '--gateway', 'web', '--namespace', 'team-a'];

describe('parseProxyArgs', () => {
  const ok: { name: string; argv: string[]; env?: NodeJS.ProcessEnv; expect: Partial<ProxyOptions> }[] = [
    { name: 'flags, with defaults', argv: BASE, expect: { controller: 'https://switchboard.system:9978', gateways: ['web'], namespace: 'team-a', tokenFile: DEFAULT_TOKEN_FILE, metricsAddress: { host: '0.0.0.0', port: 15020 }, bindAddress: '0.0.0.0', caFile: undefined } },
    { name: 'several gateways', argv: [...BASE, '--gateway', 'api'], expect: { gateways: ['web', 'api'] } },
    {
      name: 'everything from the environment',
      argv: [],
      env: { SWITCHBOARD_CONTROLLER: 'http://c:9978', SWITCHBOARD_GATEWAYS: 'web, api', POD_NAMESPACE: 'team-b', POD_NAME: 'proxy-0', SWITCHBOARD_TOKEN_FILE: '/t', SWITCHBOARD_CA_FILE: '/ca.pem', SWITCHBOARD_SERVER_NAME: 'controller' },
      expect: { controller: 'http://c:9978', gateways: ['web', 'api'], namespace: 'team-b', proxyId: 'proxy-0', tokenFile: '/t', caFile: '/ca.pem', serverName: 'controller' },
    },
    { name: 'flags win over the environment', argv: BASE, env: { POD_NAMESPACE: 'other', SWITCHBOARD_GATEWAYS: 'x' }, expect: { namespace: 'team-a', gateways: ['web'] } },
    { name: 'no filter: level info, no module levels', argv: BASE, expect: { logLevel: 'info', logFilter: undefined } },
    { name: 'the filter from the environment sets the level and module levels', argv: BASE, env: { SWITCHBOARD_LOG_FILTER: 'warn,mcp=debug' }, expect: { logLevel: 'warn', logFilter: { level: 'warn', modules: new Map([['mcp', 'debug']]) } } },
    { name: '--log-level wins over the filter\'s level', argv: [...BASE, '--log-level', 'error', '--log-filter', 'debug,xds=trace'], expect: { logLevel: 'error', logFilter: { level: 'debug', modules: new Map([['xds', 'trace']]) } } },
  ];
  for (const c of ok) {
    it(c.name, () => {
      const options = parseProxyArgs(c.argv, c.env ?? {});
      assert.notEqual(options, 'help');
      for (const [key, value] of Object.entries(c.expect)) assert.deepEqual((options as unknown as Record<string, unknown>)[key], value, key);
    });
  }

  const bad: { name: string; argv: string[]; message: RegExp }[] = [
    { name: 'no controller', argv: ['--gateway', 'web', '--namespace', 'a'], message: /--controller URL is required/ },
    { name: 'a controller that is not http(s)', argv: ['--controller', 'grpc://c:9978', '--gateway', 'web', '--namespace', 'a'], message: /http:\/\/ \(plaintext\) or https:\/\/ \(tls\)/ },
    { name: 'no gateway', argv: ['--controller', 'http://c:1', '--namespace', 'a'], message: /--gateway NAME is required/ },
    { name: 'an unknown flag', argv: [...BASE, '--nope'], message: /unknown flag --nope/ },
    { name: 'a bad log level', argv: [...BASE, '--log-level', 'loud'], message: /--log-level must be one of/ },
    { name: 'a filter naming an unknown module', argv: [...BASE, '--log-filter', 'info,mcpp=debug'], message: /--log-filter: log filter entry "mcpp=debug": module must be one of/ },
  ];
  for (const c of bad) it(`refuses ${c.name}`, () => assert.throws(() => parseProxyArgs(c.argv, {}), (err: unknown) => err instanceof UsageError && c.message.test(err.message)));

  it('--help', () => assert.equal(parseProxyArgs(['--help'], {}), 'help'));
});
