import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';

/** Every module URL the process loads, printed at exit (a module hook registered before the import). */
const PROBE = `data:text/javascript,import module from 'node:module'; const urls = []; module.registerHooks({ load(url, context, next) { urls.push(url); return next(url, context); } }); process.on('exit', () => process.stdout.write(JSON.stringify(urls)));`;

/** The URLs of every module a fresh Node process loads to import `path` (which modules a graph holds). */
export function modulesLoadedBy(path: string): string[] {
  const child = spawnSync(process.execPath, ['--import', PROBE, '--input-type=module', '-e', `await import(${JSON.stringify(path)});`], { encoding: 'utf8' });
  assert.equal(child.status, 0, child.stderr);
  return JSON.parse(child.stdout) as string[];
}
