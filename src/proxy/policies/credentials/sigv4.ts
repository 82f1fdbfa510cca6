/** SigV4 signing of an upstream request (providerG, or any backend under `auth.cloudA`), with `aws4`. */
import aws4 from 'aws4';

/**
 * The payload hash of a request whose body is streamed: its hash cannot be known before the body
 * is sent, so SigV4 signs this literal instead (sent as `x-amz-content-sha256`).
 */
export const UNSIGNED_PAYLOAD = 'UNSIGNED-PAYLOAD';

export interface AwsCredentials {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly sessionToken?: string;
}

/**
 * cloudA credentials from one source: the resolved Secret (`accessKey`, `secretKey`, optional
 * `sessionToken`) when it holds a key pair, else the standard AWS_* environment variables —
 * never a mix (a session token only signs with the keys it was issued for). Undefined when
 * neither has a key pair.
 */
export function awsCredentials(secret: Readonly<Record<string, unknown>> | undefined, env: NodeJS.ProcessEnv = process.env): AwsCredentials | undefined {
  const str = (v: unknown) => (typeof v === 'string' && v !== '' ? v : undefined);
  const fromSecret = str(secret?.accessKey) !== undefined && str(secret?.secretKey) !== undefined;
  const source = fromSecret ? { id: secret?.accessKey, key: secret?.secretKey, session: secret?.sessionToken } : { id: env.AWS_ACCESS_KEY_ID, key: env.AWS_SECRET_ACCESS_KEY, session: env.AWS_SESSION_TOKEN };
  const [accessKeyId, secretAccessKey, sessionToken] = [str(source.id), str(source.key), str(source.session)];
  if (!accessKeyId || !secretAccessKey) return undefined;
  return { accessKeyId, secretAccessKey, ...(sessionToken ? { sessionToken } : {}) };
}

export interface SignInput {
  /** The Host header value the request is sent with (`host` or `host:port`). */
  readonly host: string;
  readonly method: string;
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  /** The body as sent, or UNSIGNED_PAYLOAD for a streamed one. */
  readonly body: Uint8Array | typeof UNSIGNED_PAYLOAD;
  readonly service: string;
  readonly region: string;
}

/**
 * The headers to send: the input's plus host, x-amz-date, the session token and authorization
 * (and `x-amz-content-sha256: UNSIGNED-PAYLOAD` for a streamed body). Every input header is signed.
 */
export function signSigV4(input: SignInput, credentials: AwsCredentials): Record<string, string> {
  const unsigned = input.body === UNSIGNED_PAYLOAD;
  const request = {
    host: input.host,
    method: input.method,
    path: input.path,
    service: input.service,
    region: input.region,
    headers: { ...input.headers, host: input.host, ...(unsigned ? { 'x-amz-content-sha256': UNSIGNED_PAYLOAD } : {}) },
    // aws4 hashes the body unless x-amz-content-sha256 names the payload hash. An empty body is
    // not given: aws4 would add `content-length: 0`, which a bodiless GET does not carry on the wire.
    ...(unsigned || input.body.length === 0 ? {} : { body: Buffer.from(input.body as Uint8Array) }),
  };
  aws4.sign(request, credentials);
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) out[name.toLowerCase()] = String(value);
  return out;
}
