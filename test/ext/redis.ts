/** A real redis-server (Debian package) on a free loopback port, for the rate-limit service test. */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { Redis } from 'ioredis';
import { closedPort } from './servers.ts';

export interface RunningRedis {
  readonly redis: Redis;
  stop(): Promise<void>;
}

export async function startRedis(): Promise<RunningRedis> {
  const port = await closedPort();
  const child: ChildProcess = spawn('/usr/bin/redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  // Commands queue until the server accepts connections; reconnects are bounded.
  const redis = new Redis({ host: '127.0.0.1', port, maxRetriesPerRequest: 100, retryStrategy: (n) => (n > 100 ? null : 20) });
  // Refused connections while the server starts are expected; the bounded retry handles them.
  redis.on('error', () => {});
  await redis.ping();
  return {
    redis,
    stop: async () => {
      redis.disconnect();
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        await once(child, 'exit');
      }
    },
  };
}
