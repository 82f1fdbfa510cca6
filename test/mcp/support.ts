import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { silentLogger } from '../../src/common/logger.ts';
import type { McpBackendIR, McpTargetIR } from '../../src/ir/mcp.ts';
import { createMcpHandler, type McpHandler, type McpRequestContext } from '../../src/proxy/mcp/index.ts';
import { unusedPort } from '../support/ports.ts';

const EVERYTHING = new URL('../../node_modules/@modelcontextprotocol/server-everything/dist/index.js', import.meta.url).pathname;
const START_ATTEMPTS = 40;

export interface Upstream {
  readonly port: number;
  readonly transport: 'streamableHttp' | 'sse';
  stop(): Promise<void>;
}

async function reachable(port: number): Promise<boolean> {
  try {
    const res = await fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(500) });
    await res.body?.cancel();
    return true;
  } catch {
    return false;
  }
}

/** A real `@modelcontextprotocol/server-everything` process on a free loopback port. */
export async function startEverything(transport: 'streamableHttp' | 'sse' = 'streamableHttp'): Promise<Upstream> {
  const port = await unusedPort();
  const child: ChildProcess = spawn(process.execPath, [EVERYTHING, transport], { env: { ...process.env, PORT: String(port) }, stdio: 'ignore' });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  };
  for (let i = 0; i < START_ATTEMPTS; i++) {
    if (child.exitCode !== null) break;
    if (await reachable(port)) return { port, transport, stop };
    await delay(100);
  }
  await stop();
  throw new Error(`server-everything (${transport}) did not start on port ${port}`);
}

export function target(name: string, upstream: Upstream): McpTargetIR {
  return upstream.transport === 'sse'
    ? { name, host: '127.0.0.1', port: upstream.port, path: '/sse', protocol: 'SSE' }
    : { name, host: '127.0.0.1', port: upstream.port, path: '/mcp', protocol: 'StreamableHTTP' };
}

export function backend(targets: readonly McpTargetIR[], overrides: Partial<McpBackendIR> = {}): McpBackendIR {
  return { key: 'backend/default/mcp', targets, sessionRouting: 'Stateful', failureMode: 'FailClosed', prefixMode: 'Conditional', ...overrides };
}

export const TEST_KEY = Buffer.alloc(32, 7);

export interface Gateway {
  readonly url: string;
  readonly handler: McpHandler;
  close(): Promise<void>;
}

/** The handler mounted on a loopback node:http server, as the proxy runtime mounts it. */
export async function startGateway(ir: McpBackendIR, ctx?: (req: IncomingMessage) => McpRequestContext): Promise<Gateway> {
  const handler = createMcpHandler(ir, { logger: silentLogger, sessionKey: TEST_KEY });
  const server: Server = createServer((req, res) => void handler.handle(req, res, ctx?.(req)));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    handler,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await handler.close();
    },
  };
}

export async function connect(url: string, headers: Record<string, string> = {}): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const client = new Client({ name: 'switchboard-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } });
  await client.connect(transport);
  return { client, transport };
}

export async function connectSse(url: string): Promise<Client> {
  const client = new Client({ name: 'switchboard-test', version: '1.0.0' });
  await client.connect(new SSEClientTransport(new URL(url)));
  return client;
}

/** A loopback port with nothing listening (a target that is down). */
export function closedPort(): Promise<number> {
  return unusedPort();
}
