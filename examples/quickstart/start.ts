/**
 * `npm start`: the echo upstream and the gateway together, offline. The gateway serves the YAML in
 * ./config (watched: edit and save to see changes live). Ctrl-C stops both; the gateway drains.
 *
 * Extra arguments go to `switchboard run`, e.g. `npm start -- --workers 2 --log-format json`.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { startEchoServer } from './echo-server.ts';

const ECHO_PORT = 9090;
const here = (p: string): string => fileURLToPath(new URL(p, import.meta.url));

const echo = await startEchoServer(ECHO_PORT);
process.stdout.write(`echo upstream listening on http://127.0.0.1:${echo.port}\n`);

const gateway = spawn(process.execPath, [here('../../bin/switchboard.js'), 'run', '-f', here('./config/'), '--workers', '1', ...process.argv.slice(2)], { stdio: 'inherit' });

// The terminal sends Ctrl-C to the whole process group; a `kill` reaches only us, so forward it.
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => { if (gateway.exitCode === null) gateway.kill(signal); });
}
gateway.on('exit', (code, signal) => {
  echo.server.close();
  echo.server.closeAllConnections();
  process.exitCode = code ?? (signal ? 1 : 0);
});
