/**
 * A local cloud-A STS in AWS's wire shape (Query protocol: form POST in, XML out) that checks
 * the SigV4 signature of every call the way the service does — recomputed here from the
 * signature algorithm itself (canonical request, string to sign, derived key) with node:crypto,
 * not with the library the gateway signs with — and hands out temporary credentials it
 * remembers, so a provider mock can verify requests signed with them the same way.
 */
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SignedRequest {
  readonly method: string;
  /** Path and query as sent. */
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
}

export type SigV4Verdict =
  | { readonly ok: true; readonly accessKeyId: string; readonly sessionToken?: string }
  | { readonly ok: false; readonly reason: string };

const sha256 = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');
const hmac = (key: string | Buffer, data: string) => createHmac('sha256', key).update(data).digest();
/** RFC 3986 percent-encoding: everything but unreserved characters. */
const enc = (s: string) => encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

/**
 * Verifies a SigV4 `Authorization` header as the service would: scope (service, region), the
 * signature over the headers it names, the payload hash and the time. `secretFor` gives the
 * secret key of an access key id (undefined: unknown key).
 */
export function verifySigV4(req: SignedRequest, expect: { service: string; region: string }, secretFor: (accessKeyId: string) => string | undefined, now = Date.now()): SigV4Verdict {
  const auth = header(req.headers, 'authorization');
  const m = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, ?SignedHeaders=([a-z0-9;-]+), ?Signature=([0-9a-f]{64})$/.exec(auth);
  if (!m) return { ok: false, reason: 'no AWS4-HMAC-SHA256 authorization' };
  const [, accessKeyId, date, region, service, signedList, signature] = m;
  if (service !== expect.service || region !== expect.region) return { ok: false, reason: `scope ${region}/${service}, expected ${expect.region}/${expect.service}` };
  const secret = secretFor(accessKeyId);
  if (secret === undefined) return { ok: false, reason: `unknown access key ${accessKeyId}` };
  const amzDate = header(req.headers, 'x-amz-date');
  const when = Date.parse(amzDate.replace(/^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/, '$1-$2-$3T$4:$5:$6Z'));
  if (!amzDate.startsWith(date) || !(Math.abs(now - when) < 15 * 60_000)) return { ok: false, reason: `x-amz-date ${amzDate} is not the scope date or not current` };
  const signed = signedList.split(';');
  for (const required of ['host', 'x-amz-date', ...(req.headers['x-amz-security-token'] !== undefined ? ['x-amz-security-token'] : [])]) {
    if (!signed.includes(required)) return { ok: false, reason: `${required} is not signed` };
  }
  const [rawPath, rawQuery = ''] = req.path.split('?', 2) as [string, string?];
  const canonicalUri = rawPath.split('/').map((seg) => enc(enc(decodeURIComponent(seg)))).join('/');
  const canonicalQuery = rawQuery === '' ? '' : rawQuery.split('&').map((kv) => {
    const [k, v = ''] = kv.split('=', 2) as [string, string?];
    return [enc(decodeURIComponent(k)), enc(decodeURIComponent(v))] as const;
  }).sort(([a, x], [b, y]) => (a < b ? -1 : a > b ? 1 : x < y ? -1 : x > y ? 1 : 0)).map(([k, v]) => `${k}=${v}`).join('&');
  const canonicalHeaders = signed.map((h) => `${h}:${header(req.headers, h).trim().replace(/\s+/g, ' ')}\n`).join('');
  const canonicalRequest = [req.method, canonicalUri, canonicalQuery, canonicalHeaders, signedList, sha256(req.body)].join('\n');
  const scope = `${date}/${region}/${service}/aws4_request`;
  const stringToSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256(canonicalRequest)].join('\n');
  const key = hmac(hmac(hmac(hmac(`AWS4${secret}`, date), region), service), 'aws4_request');
  if (createHmac('sha256', key).update(stringToSign).digest('hex') !== signature) return { ok: false, reason: 'signature mismatch' };
  const token = req.headers['x-amz-security-token'];
  return { ok: true, accessKeyId, ...(typeof token === 'string' ? { sessionToken: token } : {}) };
}

function header(headers: IncomingHttpHeaders, name: string): string {
  const v = headers[name];
  return Array.isArray(v) ? v.join(',') : (v ?? '');
}

export interface IssuedSession {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly sessionToken: string;
  readonly roleArn: string;
  readonly sessionName: string;
  readonly tags: Readonly<Record<string, string>>;
}

export interface StsCall {
  readonly verdict: SigV4Verdict;
  readonly form: URLSearchParams;
  readonly headers: IncomingHttpHeaders;
}

export interface FakeSts {
  readonly url: string;
  readonly calls: StsCall[];
  /** Sessions handed out, by access key id. */
  readonly issued: Map<string, IssuedSession>;
  /** Lifetime of the credentials handed out next (seconds; default 3600). */
  lifetimeS: number;
  /** An answer to give instead of credentials (status and XML body), until cleared. */
  failWith: { status: number; code: string; message: string } | undefined;
  /** A body to send instead of the AssumeRoleResponse (shape tests), until cleared. */
  rawAnswer: string | undefined;
  /** Verifies a request signed with an issued session: signature and session token. */
  verifySession(req: SignedRequest, expect: { service: string; region: string }): SigV4Verdict;
  stop(): Promise<void>;
}

/** Starts the fake; `baseKeys` are the long-term keys allowed to call it (access key id → secret). */
export async function startFakeSts(baseKeys: Readonly<Record<string, string>>, region: string): Promise<FakeSts> {
  const calls: StsCall[] = [];
  const issued = new Map<string, IssuedSession>();
  let counter = 0;
  const state: FakeSts = {
    url: '', calls, issued, lifetimeS: 3600, failWith: undefined, rawAnswer: undefined,
    verifySession(req, expect) {
      const verdict = verifySigV4(req, expect, (id) => issued.get(id)?.secretAccessKey);
      if (!verdict.ok) return verdict;
      if (verdict.sessionToken !== issued.get(verdict.accessKeyId)?.sessionToken) return { ok: false, reason: 'x-amz-security-token is not the session token of the key' };
      return verdict;
    },
    stop: async () => undefined,
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const form = new URLSearchParams(body.toString('utf8'));
      const verdict = verifySigV4({ method: req.method ?? '', path: req.url ?? '/', headers: req.headers, body }, { service: 'sts', region }, (id) => baseKeys[id]);
      calls.push({ verdict, form, headers: req.headers });
      const error = (status: number, code: string, message: string) => res.writeHead(status, { 'content-type': 'text/xml' }).end(
        `<ErrorResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/">\n  <Error>\n    <Type>Sender</Type>\n    <Code>${code}</Code>\n    <Message>${message}</Message>\n  </Error>\n  <RequestId>${randomBytes(8).toString('hex')}</RequestId>\n</ErrorResponse>\n`);
      if (!verdict.ok) return error(403, 'SignatureDoesNotMatch', `The request signature we calculated does not match the signature you provided. (${verdict.reason})`);
      if (req.method !== 'POST' || form.get('Action') !== 'AssumeRole' || form.get('Version') !== '2011-06-15') return error(400, 'InvalidAction', 'Could not find operation');
      if (state.failWith) return error(state.failWith.status, state.failWith.code, state.failWith.message);
      if (state.rawAnswer !== undefined) return res.writeHead(200, { 'content-type': 'text/xml' }).end(state.rawAnswer);
      const roleArn = form.get('RoleArn') ?? '';
      const sessionName = form.get('RoleSessionName') ?? '';
      const tags: Record<string, string> = {};
      for (let i = 1; form.has(`Tags.member.${i}.Key`); i++) tags[form.get(`Tags.member.${i}.Key`)!] = form.get(`Tags.member.${i}.Value`) ?? '';
      counter++;
      const session: IssuedSession = {
        accessKeyId: `ASIA${String(counter).padStart(16, '0')}`,
        secretAccessKey: randomBytes(30).toString('base64'),
        sessionToken: randomBytes(180).toString('base64'),
        roleArn, sessionName, tags,
      };
      issued.set(session.accessKeyId, session);
      const expiration = new Date(Date.now() + state.lifetimeS * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
      const account = /::(\d{12}):/.exec(roleArn)?.[1] ?? '000000000000';
      const roleName = roleArn.split('/').at(-1);
      res.writeHead(200, { 'content-type': 'text/xml', 'x-amzn-requestid': randomBytes(8).toString('hex') }).end(`<AssumeRoleResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/">
  <AssumeRoleResult>
    <AssumedRoleUser>
      <AssumedRoleId>AROA3XFRBF535PLBIFPI4:${sessionName}</AssumedRoleId>
      <Arn>arn:aws:sts::${account}:assumed-role/${roleName}/${sessionName}</Arn>
    </AssumedRoleUser>
    <Credentials>
      <AccessKeyId>${session.accessKeyId}</AccessKeyId>
      <SecretAccessKey>${session.secretAccessKey}</SecretAccessKey>
      <SessionToken>${session.sessionToken}</SessionToken>
      <Expiration>${expiration}</Expiration>
    </Credentials>
    <PackedPolicySize>${Object.keys(tags).length > 0 ? 6 : 0}</PackedPolicySize>
  </AssumeRoleResult>
  <ResponseMetadata>
    <RequestId>${randomBytes(8).toString('hex')}</RequestId>
  </ResponseMetadata>
</AssumeRoleResponse>
`);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return Object.assign(state, {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    stop: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  });
}
