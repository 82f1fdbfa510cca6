/**
 * cloud-A role assumption: STS `AssumeRole` over the Query protocol (a SigV4-signed form POST,
 * service `sts`), answered in XML. The answer is read with a strict extractor of the documented
 * shape (`AssumeRoleResponse/AssumeRoleResult/Credentials/{AccessKeyId, SecretAccessKey,
 * SessionToken, Expiration}`) instead of a general XML parser: four flat text elements with
 * known alphabets, nothing to gain from a dependency, and whatever does not match the shape is
 * refused instead of being half-read.
 */
import { request } from 'undici';
import { signSigV4, type AwsCredentials } from './sigv4.ts';
import type { FetchedToken } from './token-cache.ts';
import { readTextBounded } from '../../http/body.ts';
import { MAX_TOKEN_RESPONSE_BYTES } from './cloud-tokens.ts';

export const STS_VERSION = '2011-06-15';
/** An hour: every role allows at least that, and role chaining (ambient role → role) allows no more. */
export const STS_DURATION_S = 3600;

export interface AssumeRoleCall {
  readonly roleArn: string;
  readonly sessionName: string;
  readonly tags: readonly { readonly key: string; readonly value: string }[];
  readonly region: string;
  /** `AWS_ENDPOINT_URL_STS`, when set (a full URL, `http://` allowed for local fakes). */
  readonly endpointUrl?: string;
}

/** Temporary credentials and when they stop working. */
export interface SessionCredentials extends AwsCredentials {
  readonly sessionToken: string;
  readonly expiration: string;
}

/** The STS endpoint: the override, else the regional endpoint (China regions live under amazonaws.com.cn). */
export function stsEndpoint(region: string, override?: string): URL {
  if (override) return new URL(override);
  const suffix = region.startsWith('cn-') ? 'amazonaws.com.cn' : 'amazonaws.com';
  return new URL(`https://sts.${region}.${suffix}/`);
}

/** The form body of the call: parameters in the Query protocol's list notation. */
export function assumeRoleForm(call: AssumeRoleCall): string {
  const form = new URLSearchParams({
    Action: 'AssumeRole', Version: STS_VERSION, RoleArn: call.roleArn, RoleSessionName: call.sessionName, DurationSeconds: String(STS_DURATION_S),
  });
  call.tags.forEach((t, i) => {
    form.append(`Tags.member.${i + 1}.Key`, t.key);
    form.append(`Tags.member.${i + 1}.Value`, t.value);
  });
  return form.toString();
}

/** Calls AssumeRole signed with `base`; rejects with the STS error code and message when it refuses. */
export async function assumeRole(call: AssumeRoleCall, base: AwsCredentials, now = Date.now()): Promise<FetchedToken<SessionCredentials>> {
  const url = stsEndpoint(call.region, call.endpointUrl);
  const body = Buffer.from(assumeRoleForm(call));
  const path = `${url.pathname || '/'}${url.search}`;
  const headers = signSigV4({
    host: url.host, method: 'POST', path, body, service: 'sts', region: call.region,
    headers: { 'content-type': 'application/x-www-form-urlencoded; charset=utf-8', accept: 'text/xml' },
  }, base);
  const res = await request(new URL(path, url.origin), { method: 'POST', headers, body, headersTimeout: 10_000, bodyTimeout: 10_000 });
  const text = await readTextBounded(res.body, MAX_TOKEN_RESPONSE_BYTES, { what: 'token endpoint answer' });
  if (res.statusCode >= 300) {
    const code = xmlText(text, 'Code') ?? 'unknown error';
    const message = xmlText(text, 'Message');
    throw new Error(`STS AssumeRole for ${call.roleArn} answered ${res.statusCode} ${code}${message ? `: ${message}` : ''}`);
  }
  const credentials = parseAssumeRoleResponse(text);
  const lifetimeS = Math.floor((Date.parse(credentials.expiration) - now) / 1000);
  if (!(lifetimeS > 0)) throw new Error(`STS AssumeRole for ${call.roleArn} returned credentials that already expired (${credentials.expiration})`);
  return { token: credentials, expiresInS: lifetimeS };
}

const FIELDS = {
  AccessKeyId: /^[A-Z0-9]{16,128}$/,
  SecretAccessKey: /^[A-Za-z0-9/+=]{16,256}$/,
  SessionToken: /^[A-Za-z0-9/+=]{16,8192}$/,
  Expiration: /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/,
} as const;

/** The Credentials of an AssumeRoleResponse; throws when the document is not in the documented shape. */
export function parseAssumeRoleResponse(xml: string): SessionCredentials {
  const result = only(xml, 'AssumeRoleResult');
  if (result === undefined || !/<AssumeRoleResponse[\s>]/.test(xml)) throw new Error('STS answer is not an AssumeRoleResponse with one AssumeRoleResult');
  const block = only(result, 'Credentials');
  if (block === undefined) throw new Error('STS answer has no single Credentials element');
  const values: Partial<Record<keyof typeof FIELDS, string>> = {};
  for (const [name, pattern] of Object.entries(FIELDS) as [keyof typeof FIELDS, RegExp][]) {
    const raw = only(block, name);
    const value = raw === undefined ? undefined : decodeEntities(raw.trim());
    if (value === undefined || !pattern.test(value)) throw new Error(`STS answer has no valid Credentials/${name}`);
    values[name] = value;
  }
  return { accessKeyId: values.AccessKeyId!, secretAccessKey: values.SecretAccessKey!, sessionToken: values.SessionToken!, expiration: values.Expiration! };
}

/** The text between `<name>` and `</name>` when the element occurs exactly once, else undefined. */
function only(xml: string, name: string): string | undefined {
  const re = new RegExp(`<${name}>([\\s\\S]*?)</${name}>`, 'g');
  const found = [...xml.matchAll(re)];
  return found.length === 1 ? found[0][1] : undefined;
}

function xmlText(xml: string, name: string): string | undefined {
  const m = new RegExp(`<${name}>([^<]*)</${name}>`).exec(xml);
  return m ? decodeEntities(m[1].trim()).slice(0, 500) : undefined;
}

const ENTITIES: Readonly<Record<string, string>> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

function decodeEntities(s: string): string {
  return s.replace(/&(#x[0-9a-fA-F]+|#[0-9]+|[a-z]+);/g, (whole, e: string) => {
    if (e.startsWith('#x')) return String.fromCodePoint(parseInt(e.slice(2), 16));
    if (e.startsWith('#')) return String.fromCodePoint(parseInt(e.slice(1), 10));
    return ENTITIES[e] ?? whole;
  });
}
