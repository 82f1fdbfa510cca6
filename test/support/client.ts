/**
 * Clients for e2e tests. Each request opens its own connection (no agent) so a test controls the
 * Host header, SNI and protocol precisely and nothing lingers after it. Bodies are read whole:
 * tests send small requests.
 */
import http from 'node:http';
import http2 from 'node:http2';
import https from 'node:https';
import type { TLSSocket } from 'node:tls';
import type { EchoRecord } from './echo-server.ts';

export interface RequestOptions {
  /** Request target path with query, e.g. `/foo?x=1`. Default `/`. */
  path?: string;
  /** Host header (and the TLS server name unless `servername` is given). */
  host?: string;
  method?: string;
  headers?: Record<string, string | string[]>;
  body?: string | Buffer;
  /** Speak TLS; the gateway's certificate is not verified, it is returned for inspection. */
  tls?: boolean;
  /** SNI to send; defaults to `host`. */
  servername?: string;
}

export interface PresentedCertificate {
  commonName: string;
  /** e.g. `DNS:a.example.com, DNS:*.a.example.com` */
  subjectAltName: string;
}

export interface TestResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  protocol: 'HTTP/1.1' | 'HTTP/2';
  /** Set when the request went over TLS. */
  certificate?: PresentedCertificate;
  /** The body parsed as the echo server's report; throws if it is not JSON. */
  echo(): EchoRecord;
}

const REQUEST_TIMEOUT_MS = 10_000;

/** One HTTP/1.1 request (over TLS when `opts.tls`) to 127.0.0.1:`port`. */
export function sendRequest(port: number, opts: RequestOptions = {}): Promise<TestResponse> {
  const headers: Record<string, string | string[]> = { ...opts.headers };
  if (opts.host !== undefined) headers.host = opts.host;
  if (opts.body !== undefined) headers['content-length'] = String(Buffer.byteLength(opts.body));
  const common = { host: '127.0.0.1', port, path: opts.path ?? '/', method: opts.method ?? 'GET', headers, agent: false as const };
  return new Promise((resolve, reject) => {
    const onResponse = (res: http.IncomingMessage): void => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => {
        const socket = res.socket as TLSSocket | null;
        const certificate = opts.tls && socket ? presented(socket) : undefined;
        resolve(response(res.statusCode ?? 0, res.headers, Buffer.concat(chunks).toString('utf8'), 'HTTP/1.1', certificate));
      });
    };
    const req = opts.tls
      ? https.request({ ...common, servername: opts.servername ?? hostOnly(opts.host), rejectUnauthorized: false }, onResponse)
      : http.request(common, onResponse);
    req.setTimeout(REQUEST_TIMEOUT_MS, () => req.destroy(new Error(`request timed out after ${REQUEST_TIMEOUT_MS} ms`)));
    req.on('error', reject);
    req.end(opts.body);
  });
}

/**
 * One HTTP/2 request: over TLS with ALPN h2 when `opts.tls`, otherwise cleartext with prior
 * knowledge (h2c). `host` becomes `:authority`.
 */
export async function sendHttp2Request(port: number, opts: RequestOptions = {}): Promise<TestResponse> {
  const authority = opts.host ?? `127.0.0.1:${port}`;
  const session = opts.tls
    ? http2.connect(`https://127.0.0.1:${port}`, { servername: opts.servername ?? hostOnly(opts.host), rejectUnauthorized: false, ALPNProtocols: ['h2'] })
    : http2.connect(`http://127.0.0.1:${port}`);
  try {
    return await new Promise<TestResponse>((resolve, reject) => {
      session.on('error', reject);
      const stream = session.request({
        ':method': opts.method ?? 'GET',
        ':path': opts.path ?? '/',
        ':authority': authority,
        ':scheme': opts.tls ? 'https' : 'http',
        ...opts.headers,
      });
      stream.setTimeout(REQUEST_TIMEOUT_MS, () => stream.close(http2.constants.NGHTTP2_CANCEL));
      let status = 0;
      let headers: http.IncomingHttpHeaders = {};
      stream.on('response', (h) => {
        status = Number(h[':status']);
        headers = Object.fromEntries(Object.entries(h).filter(([k]) => !k.startsWith(':'))) as http.IncomingHttpHeaders;
      });
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('error', reject);
      stream.on('close', () => {
        if (status === 0) return reject(new Error(`HTTP/2 stream closed without a response (code ${stream.rstCode})`));
        const certificate = opts.tls ? presented(session.socket as TLSSocket) : undefined;
        resolve(response(status, headers, Buffer.concat(chunks).toString('utf8'), 'HTTP/2', certificate));
      });
      stream.end(opts.body);
    });
  } finally {
    session.close();
  }
}

function response(
  status: number,
  headers: http.IncomingHttpHeaders,
  text: string,
  protocol: TestResponse['protocol'],
  certificate: PresentedCertificate | undefined,
): TestResponse {
  return {
    status,
    headers,
    text,
    protocol,
    ...(certificate ? { certificate } : {}),
    echo: () => JSON.parse(text) as EchoRecord,
  };
}

function presented(socket: TLSSocket): PresentedCertificate | undefined {
  const cert = socket.getPeerCertificate();
  if (!cert || Object.keys(cert).length === 0) return undefined;
  const cn = cert.subject?.CN;
  return { commonName: Array.isArray(cn) ? cn.join(',') : String(cn ?? ''), subjectAltName: cert.subjectaltname ?? '' };
}

function hostOnly(host: string | undefined): string | undefined {
  return host?.replace(/:\d+$/, '');
}
