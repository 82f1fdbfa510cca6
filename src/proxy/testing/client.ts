import { request as httpRequest, type IncomingHttpHeaders, type OutgoingHttpHeaders } from 'node:http';
import { connect as http2Connect, type SecureClientSessionOptions } from 'node:http2';

export interface TestResponse {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

export interface TestRequest {
  readonly method?: string;
  readonly path?: string;
  readonly headers?: OutgoingHttpHeaders;
  readonly body?: string;
}

/** One HTTP/1.1 request on a fresh connection (no agent, so nothing lingers after the test). */
export function http1(port: number, req: TestRequest = {}): Promise<TestResponse> {
  return new Promise((resolve, reject) => {
    const r = httpRequest({ host: '127.0.0.1', port, method: req.method ?? 'GET', path: req.path ?? '/', headers: req.headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    r.on('error', reject);
    r.end(req.body);
  });
}

/** One HTTP/2 request: h2 over TLS for an `https:` authority, h2c with prior knowledge for `http:`. */
export function http2(
  authority: string,
  req: TestRequest = {},
  tls: SecureClientSessionOptions = {},
): Promise<TestResponse & { alpn: string | false | undefined; trailers: IncomingHttpHeaders }> {
  return new Promise((resolve, reject) => {
    const session = http2Connect(authority, tls);
    session.on('error', reject);
    const stream = session.request({ ':method': req.method ?? 'GET', ':path': req.path ?? '/', ...req.headers });
    let headers: IncomingHttpHeaders = {};
    let trailers: IncomingHttpHeaders = {};
    const chunks: Buffer[] = [];
    stream.on('response', (h) => (headers = h as IncomingHttpHeaders));
    stream.on('trailers', (t) => (trailers = t as IncomingHttpHeaders));
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('end', () => {
      const alpn = session.alpnProtocol;
      session.close();
      resolve({ status: Number(headers[':status']), headers, body: Buffer.concat(chunks).toString('utf8'), alpn, trailers });
    });
    stream.on('error', (err) => {
      session.destroy();
      reject(err);
    });
    stream.end(req.body);
  });
}
