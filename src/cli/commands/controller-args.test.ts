import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { CONTROLLER_LOG_MODULES } from '../../common/log-filter.ts';
import { UsageError } from '../args.ts';
import { CONTROLLER_HELP, parseControllerArgs, type ControllerOptions } from './controller-args.ts';

const parse = (argv: string[], env: NodeJS.ProcessEnv = {}): ControllerOptions => {
  const options = parseControllerArgs(argv, env);
  assert.notEqual(options, 'help');
  return options as ControllerOptions;
};

describe('switchboard controller flags', () => {
  it('defaults: SPEC.md ports, tls transport needs a certificate', () => {
    assert.throws(() => parse([]), (err: Error) => err instanceof UsageError && /needs --xds-cert-file/.test(err.message));
    const options = parse(['--xds-mode', 'plaintext']);
    assert.deepEqual([options.healthAddress.port, options.metricsAddress.port, options.xdsAddress.port], [9093, 9092, 9978]);
    assert.equal(options.controllerName, 'switchboard.dev/gateway-controller');
    assert.equal(options.leaderElection, true);
    assert.deepEqual(options.namespaceSelectors, []);
  });

  it('reads the certificate files, the environment and the selectors', () => {
    const dir = mkdtempSync(join(tmpdir(), 'controller-args-'));
    writeFileSync(join(dir, 'tls.crt'), 'CERT');
    writeFileSync(join(dir, 'tls.key'), 'KEY');
    const options = parse(
      ['--xds-mode', 'either', '--xds-cert-file', join(dir, 'tls.crt'), '--xds-key-file', join(dir, 'tls.key'), '--discovery-namespace-selectors', '[{"matchLabels":{"gw":"on"}}]'],
      { POD_NAMESPACE: 'gateway-system', POD_NAME: 'controller-0', CONTROLLER_NAME: 'example.com/ctl' },
    );
    assert.deepEqual(options.xdsTls, { certPem: 'CERT', keyPem: 'KEY' });
    assert.equal(options.leaseNamespace, 'gateway-system');
    assert.match(options.identity, /^controller-0_[a-z0-9]+$/);
    assert.equal(options.controllerName, 'example.com/ctl');
    assert.deepEqual(options.namespaceSelectors, [{ matchLabels: { gw: 'on' } }]);
  });

  const gate: { name: string; argv: string[]; env: NodeJS.ProcessEnv; on: boolean }[] = [
    { name: 'off by default', argv: [], env: {}, on: false },
    { name: 'the chart value on (SWITCHBOARD_PROXY_MODELS_ENABLED)', argv: [], env: { SWITCHBOARD_PROXY_MODELS_ENABLED: 'true' }, on: true },
    { name: 'the chart value off', argv: [], env: { SWITCHBOARD_PROXY_MODELS_ENABLED: 'false' }, on: false },
    { name: 'the flag, as on run', argv: ['--enable-proxy-models'], env: {}, on: true },
    { name: 'the flag over the chart value off', argv: ['--enable-proxy-models'], env: { SWITCHBOARD_PROXY_MODELS_ENABLED: 'false' }, on: true },
  ];
  for (const row of gate) {
    it(`ProxyModel API gate: ${row.name}`, () => assert.equal(parse(['--xds-mode', 'plaintext', ...row.argv], row.env).proxyModels, row.on));
  }
  it('refuses a SWITCHBOARD_PROXY_MODELS_ENABLED that is neither true nor false', () => {
    assert.throws(() => parse(['--xds-mode', 'plaintext'], { SWITCHBOARD_PROXY_MODELS_ENABLED: 'yes' }), (err: Error) => err instanceof UsageError && /SWITCHBOARD_PROXY_MODELS_ENABLED must be true or false/.test(err.message));
  });

  const filters: { name: string; argv: string[]; env: NodeJS.ProcessEnv; expect: Pick<ControllerOptions, 'logLevel' | 'logFilter'> }[] = [
    { name: 'no filter: level info, no module levels', argv: [], env: {}, expect: { logLevel: 'info', logFilter: undefined } },
    { name: 'SWITCHBOARD_LOG_FILTER sets the level and module levels', argv: [], env: { SWITCHBOARD_LOG_FILTER: 'warn,kube=debug,xds=trace' }, expect: { logLevel: 'warn', logFilter: { level: 'warn', modules: new Map([['kube', 'debug'], ['xds', 'trace']]) } } },
    { name: '--log-filter wins over the environment', argv: ['--log-filter', 'provision=debug'], env: { SWITCHBOARD_LOG_FILTER: 'error' }, expect: { logLevel: 'info', logFilter: { level: undefined, modules: new Map([['provision', 'debug']]) } } },
    { name: '--log-level wins over the filter\'s level', argv: ['--log-level', 'error', '--log-filter', 'debug,status=off,leader=debug'], env: {}, expect: { logLevel: 'error', logFilter: { level: 'debug', modules: new Map([['status', 'silent'], ['leader', 'debug']]) } } },
  ];
  for (const row of filters) {
    it(`log filter: ${row.name}`, () => {
      const { logLevel, logFilter } = parse(['--xds-mode', 'plaintext', ...row.argv], row.env);
      assert.deepEqual({ logLevel, logFilter }, row.expect);
    });
  }
  it('help names every module the controller filter takes', () => {
    for (const module of Object.keys(CONTROLLER_LOG_MODULES)) assert.match(CONTROLLER_HELP, new RegExp(`modules:[^)]*\\b${module}\\b`), module);
  });

  const mistakes: { name: string; argv: string[]; message: RegExp }[] = [
    { name: 'a filter naming a proxy module the controller does not have', argv: ['--xds-mode', 'plaintext', '--log-filter', 'info,mcp=debug'], message: /^--log-filter: log filter entry "mcp=debug": module must be one of kube, status, provision, leader, xds$/ },
    { name: 'a bad log level', argv: ['--xds-mode', 'plaintext', '--log-level', 'loud'], message: /--log-level must be one of/ },
    { name: 'unknown flag', argv: ['--xds-mode', 'plaintext', '--nope'], message: /unknown flag --nope/ },
    { name: 'bad transport mode', argv: ['--xds-mode', 'mtls'], message: /--xds-mode must be one of plaintext, tls, either/ },
    { name: 'bad selector', argv: ['--xds-mode', 'plaintext', '--discovery-namespace-selectors', '[{"matchLabel":{}}]'], message: /unknown field matchLabel/ },
    { name: 'selector not JSON', argv: ['--xds-mode', 'plaintext', '--discovery-namespace-selectors', 'team=a'], message: /discovery-namespace-selectors/ },
    { name: 'bad address', argv: ['--xds-mode', 'plaintext', '--health-address', '9093'], message: /--health-address must look like/ },
    { name: 'missing certificate file', argv: ['--xds-mode', 'tls', '--xds-cert-file', '/nonexistent/crt', '--xds-key-file', '/nonexistent/key'], message: /cannot read \/nonexistent\/crt/ },
    { name: 'bad max objects', argv: ['--xds-mode', 'plaintext', '--max-objects', '0'], message: /--max-objects/ },
  ];
  for (const row of mistakes) {
    it(`refuses: ${row.name}`, () => assert.throws(() => parse(row.argv), (err: Error) => err instanceof UsageError && row.message.test(err.message)));
  }
});
