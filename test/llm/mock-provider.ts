/**
 * A local provider that speaks one vendor's wire format from the recorded shapes in
 * test/fixtures/llm: it records every request (method, path, headers, body) and answers with the
 * fixture the test chose for that path — JSON, SSE text, or Bedrock event-stream frames, streamed
 * in small pieces so the gateway's translators see arbitrary chunk boundaries.
 */
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadFixtures, upstreamStreamBytes, type UpstreamFixture } from '../../src/proxy/llm/translate/testing/fixtures.ts';

export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
  json(): Record<string, unknown>;
}

/** What the mock answers for one request: a fixture's upstream, or a verdict of its own (401 on a bad signature …). */
export type Answer = UpstreamFixture['upstream'];
export type Responder = (req: RecordedRequest) => Answer;

export interface MockProvider {
  readonly host: string;
  readonly port: number;
  readonly requests: RecordedRequest[];
  /** Answers by path prefix; the latest registration for a matching prefix wins; unmatched paths get 404. */
  answer(pathPrefix: string, responder: Responder | Answer): void;
  stop(): Promise<void>;
}

const STREAMS = new Map(loadFixtures<UpstreamFixture>('streams').map((f) => [f.name, f.data.upstream]));
const RESPONSES = new Map(loadFixtures<UpstreamFixture>('responses').map((f) => [f.name, f.data.upstream]));

/** A recorded stream fixture by file name (test/fixtures/llm/streams). */
export function streamFixture(name: string): Answer {
  const found = STREAMS.get(name);
  if (!found) throw new Error(`no stream fixture ${name}`);
  return found;
}

/** A recorded response fixture by file name (test/fixtures/llm/responses). */
export function responseFixture(name: string): Answer {
  const found = RESPONSES.get(name);
  if (!found) throw new Error(`no response fixture ${name}`);
  return found;
}

export async function startMockProvider(): Promise<MockProvider> {
  const requests: RecordedRequest[] = [];
  const routes: [string, Responder][] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const recorded: RecordedRequest = {
        method: req.method ?? '', path: req.url ?? '/', headers: req.headers, body,
        json: () => JSON.parse(body.toString('utf8')) as Record<string, unknown>,
      };
      requests.push(recorded);
      const route = routes.find(([prefix]) => recorded.path.startsWith(prefix));
      if (!route) {
        res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"no such path in the mock"}}');
        return;
      }
      void write(res, route[1](recorded));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    host: '127.0.0.1',
    port: (server.address() as AddressInfo).port,
    requests,
    answer(prefix, responder) {
      routes.unshift([prefix, typeof responder === 'function' ? responder : () => responder]);
    },
    async stop() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

async function write(res: ServerResponse, answer: Answer): Promise<void> {
  if (answer.sse === undefined && answer.eventstream === undefined) {
    res.writeHead(answer.status ?? 200, { 'content-type': 'application/json', ...answer.headers }).end(JSON.stringify(answer.body ?? {}));
    return;
  }
  const contentType = answer.eventstream ? 'application/vnd.amazon.eventstream' : 'text/event-stream';
  res.writeHead(answer.status ?? 200, { 'content-type': contentType, ...answer.headers });
  const bytes = upstreamStreamBytes(answer);
  // 7-byte pieces with a turn of the event loop between them: real chunk boundaries on the wire.
  for (let i = 0; i < bytes.length; i += 7) {
    res.write(bytes.subarray(i, i + 7));
    await new Promise((resolve) => setImmediate(resolve));
  }
  res.end();
}

/** A Service (port 8000) whose one ready endpoint is the mock vendor: a provider or a ProxyModel names it by backendRef. */
export function vendorService(name: string, vendor: MockProvider): string {
  return `apiVersion: v1
kind: Service
metadata: { name: ${name} }
spec: { ports: [{ name: http, port: 8000 }] }
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: { name: ${name}-1, labels: { kubernetes.io/service-name: ${name} } }
addressType: IPv4
ports: [{ name: http, port: ${vendor.port} }]
endpoints: [{ addresses: [${vendor.host}], conditions: { ready: true } }]
`;
}
