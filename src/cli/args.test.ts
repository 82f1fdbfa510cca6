import assert from 'node:assert/strict';
import os from 'node:os';
import { describe, it } from 'node:test';
import { RUN_LOG_MODULES } from '../common/log-filter.ts';
import { parseRunArgs, parseValidateArgs, parseVersionArgs, UsageError, type RunOptions } from './args.ts';
import { RUN_HELP } from './help.ts';

describe('CLI arguments', () => {
  it('applies the documented defaults to run', () => {
    assert.deepEqual(parseRunArgs(['-f', 'a.yaml', '--file', 'dir/'], {}), {
      files: ['a.yaml', 'dir/'],
      adminAddress: { host: '127.0.0.1', port: 15000 },
      metricsAddress: { host: '0.0.0.0', port: 15020 },
      logLevel: 'info',
      logFilter: undefined,
      logFilterText: undefined,
      logFormat: 'text',
      workers: os.availableParallelism(),
      workerStallTimeoutMs: 10_000,
      proxyModels: false,
    });
  });

  it('reads every run flag', () => {
    const options = parseRunArgs(['-f', 'x', '--admin-address', '[::1]:0', '--metrics-address', ':9100', '--log-level', 'debug', '--log-filter', 'warn,llm=trace', '--log-format', 'json', '--workers', '3', '--worker-stall-timeout', '2.5', '--enable-proxy-models'], {});
    assert.notEqual(options, 'help');
    assert.deepEqual(options, {
      files: ['x'], adminAddress: { host: '::1', port: 0 }, metricsAddress: { host: '0.0.0.0', port: 9100 }, logLevel: 'debug',
      logFilter: { level: 'warn', modules: new Map([['llm', 'trace']]) }, logFilterText: 'warn,llm=trace', logFormat: 'json', workers: 3, workerStallTimeoutMs: 2500, proxyModels: true,
    });
  });

  const filters: { name: string; argv: string[]; env: NodeJS.ProcessEnv; expect: Pick<RunOptions, 'logLevel' | 'logFilter' | 'logFilterText'> }[] = [
    { name: 'no filter: level info, no module levels', argv: [], env: {}, expect: { logLevel: 'info', logFilter: undefined, logFilterText: undefined } },
    { name: 'a blank filter is none', argv: [], env: { SWITCHBOARD_LOG_FILTER: ' ' }, expect: { logLevel: 'info', logFilter: undefined, logFilterText: undefined } },
    {
      name: 'SWITCHBOARD_LOG_FILTER sets the level and module levels', argv: [], env: { SWITCHBOARD_LOG_FILTER: 'warn,source=debug' },
      expect: { logLevel: 'warn', logFilter: { level: 'warn', modules: new Map([['source', 'debug']]) }, logFilterText: 'warn,source=debug' },
    },
    {
      name: '--log-filter wins over the environment', argv: ['--log-filter', 'mcp=debug'], env: { SWITCHBOARD_LOG_FILTER: 'error' },
      expect: { logLevel: 'info', logFilter: { level: undefined, modules: new Map([['mcp', 'debug']]) }, logFilterText: 'mcp=debug' },
    },
    {
      name: '--log-level wins over the filter\'s level', argv: ['--log-level', 'error', '--log-filter', 'debug,forward=trace'], env: {},
      expect: { logLevel: 'error', logFilter: { level: 'debug', modules: new Map([['forward', 'trace']]) }, logFilterText: 'debug,forward=trace' },
    },
  ];
  for (const c of filters) {
    it(`run log filter: ${c.name}`, () => {
      const options = parseRunArgs(['-f', 'x', ...c.argv], c.env);
      assert.notEqual(options, 'help');
      const { logLevel, logFilter, logFilterText } = options as RunOptions;
      assert.deepEqual({ logLevel, logFilter, logFilterText }, c.expect);
    });
  }

  it('run help names every module the run filter takes', () => {
    for (const module of Object.keys(RUN_LOG_MODULES)) assert.match(RUN_HELP, new RegExp(`modules:[^)]*\\b${module}\\b`), module);
    assert.match(RUN_HELP, /--log-filter FILTER/);
  });

  it('answers --help on every command', () => {
    assert.equal(parseRunArgs(['--help']), 'help');
    assert.equal(parseValidateArgs(['-h']), 'help');
    assert.equal(parseVersionArgs(['--help']), 'help');
    assert.equal(parseVersionArgs([]), 'version');
  });

  const mistakes = [
    { name: 'an unknown flag', parse: () => parseRunArgs(['-f', 'x', '--bogus']), message: /^unknown flag --bogus$/ },
    { name: 'an unknown short flag', parse: () => parseValidateArgs(['-f', 'x', '-z']), message: /^unknown flag -z$/ },
    { name: 'no files', parse: () => parseRunArgs([]), message: /at least one -f PATH/ },
    { name: 'a positional path', parse: () => parseValidateArgs(['a.yaml']), message: /unexpected argument "a.yaml".*-f PATH/ },
    { name: 'a flag without its value', parse: () => parseRunArgs(['-f']), message: /^-f, --file needs a value$/ },
    { name: 'zero workers', parse: () => parseRunArgs(['-f', 'x', '--workers', '0']), message: /--workers must be a whole number/ },
    { name: 'non-numeric stall timeout', parse: () => parseRunArgs(['-f', 'x', '--worker-stall-timeout', '10s']), message: /--worker-stall-timeout must be a number of seconds/ },
    { name: 'fractional workers', parse: () => parseRunArgs(['-f', 'x', '--workers', '1.5']), message: /--workers must be a whole number/ },
    { name: 'a bad log level', parse: () => parseRunArgs(['-f', 'x', '--log-level', 'loud']), message: /--log-level must be one of/ },
    { name: 'a filter naming a module run does not have (the proxy\'s xds)', parse: () => parseRunArgs(['-f', 'x', '--log-filter', 'xds=debug'], {}), message: /^--log-filter: log filter entry "xds=debug": module must be one of source, mcp, llm, forward$/ },
    { name: 'a filter with an unknown level', parse: () => parseRunArgs(['-f', 'x'], { SWITCHBOARD_LOG_FILTER: 'loud' }), message: /^--log-filter: log filter entry "loud": level must be one of/ },
    { name: 'a bad log format', parse: () => parseRunArgs(['-f', 'x', '--log-format', 'xml']), message: /--log-format must be json or text/ },
    { name: 'an address without a port', parse: () => parseRunArgs(['-f', 'x', '--admin-address', 'localhost']), message: /--admin-address must look like HOST:PORT/ },
    { name: 'a port out of range', parse: () => parseRunArgs(['-f', 'x', '--metrics-address', ':70000']), message: /--metrics-address must look like/ },
    { name: 'arguments to version', parse: () => parseVersionArgs(['--json']), message: /^unknown flag --json$/ },
  ];
  for (const c of mistakes) {
    it(`rejects ${c.name} with a usage error`, () => {
      assert.throws(c.parse, (err: unknown) => err instanceof UsageError && c.message.test(err.message));
    });
  }
});
