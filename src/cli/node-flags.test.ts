import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { SUGGESTED_SEMI_SPACE_MIB, semiSpaceToSet } from './node-flags.js';

const ENTRY = fileURLToPath(new URL('../../bin/switchboard.js', import.meta.url));

describe('semiSpaceToSet', () => {
  const rows: { name: string; command: string | undefined; execArgv?: string[]; env?: Record<string, string>; expected: number | undefined }[] = [
    { name: 'run keeps V8 sizing unless asked (it costs hot-path CPU)', command: 'run', expected: undefined },
    { name: 'proxy keeps V8 sizing unless asked', command: 'proxy', expected: undefined },
    { name: 'controller starts with the suggested size (it proxies no request)', command: 'controller', expected: SUGGESTED_SEMI_SPACE_MIB },
    { name: 'controller with an empty env: the suggested size', command: 'controller', env: { SWITCHBOARD_SEMI_SPACE_MIB: '' }, expected: SUGGESTED_SEMI_SPACE_MIB },
    { name: 'controller with off keeps V8 sizing', command: 'controller', env: { SWITCHBOARD_SEMI_SPACE_MIB: 'off' }, expected: undefined },
    { name: 'controller with 0 keeps V8 sizing', command: 'controller', env: { SWITCHBOARD_SEMI_SPACE_MIB: '0' }, expected: undefined },
    { name: 'controller: a flag on the command line stands', command: 'controller', execArgv: ['--max-semi-space-size=32'], expected: undefined },
    { name: 'run with the suggested size', command: 'run', env: { SWITCHBOARD_SEMI_SPACE_MIB: '8' }, expected: SUGGESTED_SEMI_SPACE_MIB },
    { name: 'proxy with a size', command: 'proxy', env: { SWITCHBOARD_SEMI_SPACE_MIB: '8' }, expected: 8 },
    { name: 'controller with a size', command: 'controller', env: { SWITCHBOARD_SEMI_SPACE_MIB: '8' }, expected: 8 },
    { name: 'a short command keeps V8 sizing even when asked', command: 'version', env: { SWITCHBOARD_SEMI_SPACE_MIB: '8' }, expected: undefined },
    { name: 'a short command keeps V8 sizing', command: 'validate', expected: undefined },
    { name: 'version keeps V8 sizing', command: 'version', expected: undefined },
    { name: 'no command keeps V8 sizing', command: undefined, expected: undefined },
    { name: 'the env sets the size', command: 'run', env: { SWITCHBOARD_SEMI_SPACE_MIB: '4' }, expected: 4 },
    { name: 'the env with spaces', command: 'run', env: { SWITCHBOARD_SEMI_SPACE_MIB: ' 16 ' }, expected: 16 },
    { name: 'an empty env keeps V8 sizing', command: 'run', env: { SWITCHBOARD_SEMI_SPACE_MIB: '' }, expected: undefined },
    { name: '0 turns it off', command: 'run', env: { SWITCHBOARD_SEMI_SPACE_MIB: '0' }, expected: undefined },
    { name: 'off turns it off', command: 'run', env: { SWITCHBOARD_SEMI_SPACE_MIB: 'OFF' }, expected: undefined },
    { name: 'the flag already on the command line stands (and stops a second relaunch)', command: 'run', execArgv: ['--max-semi-space-size=8'], env: { SWITCHBOARD_SEMI_SPACE_MIB: '4' }, expected: undefined },
    { name: 'the underscore spelling stands', command: 'run', execArgv: ['--max_semi_space_size', '32'], env: { SWITCHBOARD_SEMI_SPACE_MIB: '4' }, expected: undefined },
    { name: 'the flag in NODE_OPTIONS stands', command: 'run', env: { NODE_OPTIONS: '--enable-source-maps --max-semi-space-size=2', SWITCHBOARD_SEMI_SPACE_MIB: '4' }, expected: undefined },
    { name: 'other node flags do not count', command: 'run', execArgv: ['--cpu-prof', '--max-old-space-size=512'], env: { NODE_OPTIONS: '--min-semi-space-size=1', SWITCHBOARD_SEMI_SPACE_MIB: '8' }, expected: 8 },
  ];
  for (const row of rows) {
    it(row.name, () => {
      assert.equal(semiSpaceToSet({ command: row.command, execArgv: row.execArgv ?? [], env: row.env ?? {} }), row.expected);
    });
  }

  for (const bad of ['x', '-1', '1.5', '1025', '99999', '8m']) {
    it(`refuses SWITCHBOARD_SEMI_SPACE_MIB=${bad}`, () => {
      assert.throws(() => semiSpaceToSet({ command: 'run', execArgv: [], env: { SWITCHBOARD_SEMI_SPACE_MIB: bad } }), /SWITCHBOARD_SEMI_SPACE_MIB must be/);
    });
  }
});

// Runs in the CLI's process (and again in the relaunched one): at exit, what node was started with
// and the heap limit V8 took from it (old generation + 3 × the semi-space).
const PROBE = `data:text/javascript,import v8 from 'node:v8'; process.on('exit', () => process.stderr.write('probe ' + JSON.stringify({ pid: process.pid, execArgv: process.execArgv, limit: v8.getHeapStatistics().heap_size_limit }) + '\\n'))`;

interface Probed { readonly pid: number; readonly execArgv: string[]; readonly limit: number; readonly childPid: number | undefined; readonly status: number | null; readonly stderr: string }

function start(args: string[], env: NodeJS.ProcessEnv = {}): Probed {
  const child = spawnSync(process.execPath, ['--import', PROBE, ENTRY, ...args], { env: { ...process.env, SWITCHBOARD_SEMI_SPACE_MIB: '', ...env }, encoding: 'utf8' });
  const lines = child.stderr.split('\n').filter((line) => line.startsWith('probe '));
  // The first process never exits when it relaunches (execve replaces it): one line either way.
  assert.equal(lines.length, 1, child.stderr);
  const probed = JSON.parse((lines[0] as string).slice('probe '.length)) as { pid: number; execArgv: string[]; limit: number };
  return { ...probed, childPid: child.pid, status: child.status, stderr: child.stderr };
}

describe('bin/switchboard.js relaunch', () => {
  it('a long-running command runs in the same process with the smaller young generation', (t) => {
    if (typeof process.execve !== 'function') return t.skip('no process.execve on this platform');
    const relaunched = start(['run', '--help'], { SWITCHBOARD_SEMI_SPACE_MIB: String(SUGGESTED_SEMI_SPACE_MIB) });
    const off = start(['run', '--help']);
    assert.equal(relaunched.status, 0, relaunched.stderr);
    assert.deepEqual(relaunched.execArgv.slice(-1), [`--max-semi-space-size=${SUGGESTED_SEMI_SPACE_MIB}`]);
    assert.ok(relaunched.execArgv.some((arg) => arg.startsWith('data:')), 'node flags given are kept');
    assert.equal(relaunched.pid, relaunched.childPid, 'execve: the pid the parent started is the one that runs');
    assert.ok(!off.execArgv.some((arg) => arg.includes('semi-space')), 'SWITCHBOARD_SEMI_SPACE_MIB unset: no relaunch');
    assert.ok(relaunched.limit < off.limit, `V8 took the flag: heap limit ${relaunched.limit} < ${off.limit}`);
  });

  it('a short command is not relaunched', () => {
    const version = start(['version'], { SWITCHBOARD_SEMI_SPACE_MIB: '8' });
    assert.equal(version.status, 0, version.stderr);
    assert.ok(!version.execArgv.some((arg) => arg.includes('semi-space')));
  });

  it('a malformed SWITCHBOARD_SEMI_SPACE_MIB is a usage error', () => {
    const child = spawnSync(process.execPath, [ENTRY, 'run', '--help'], { env: { ...process.env, SWITCHBOARD_SEMI_SPACE_MIB: 'lots' }, encoding: 'utf8' });
    assert.equal(child.status, 2);
    assert.match(child.stderr, /SWITCHBOARD_SEMI_SPACE_MIB must be a whole number/);
  });
});
