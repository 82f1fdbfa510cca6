/**
 * What the remote guard kinds (webhook, providerAModeration, cloudAGuardrails, cloudCShield) share:
 * the services they are compiled with, and one JSON POST to a guard service — through the shared
 * backend-policy layer (the guard's `policies`: tcp, tls, http, tunnel, auth), under a timeout,
 * with the answer read under a cap. A call that gets no usable answer throws GuardServiceError;
 * the runner then applies the guard's failure mode (FailClosed unless the kind has FailOpen).
 */
import { Agent, getGlobalDispatcher, request, type Dispatcher } from 'undici';
import type { BackendPolicy } from '../../../../ir/policy.ts';
import type { SharedConnections } from '../../../ext/connections.ts';
import type { EndpointResolver } from '../../../ext/endpoint.ts';
import { readTextBounded } from '../../../http/body.ts';
import { connectionSettings, connectorFor } from '../../../policies/backend/connection.ts';
import type { BackendCredentials, CredentialDefaults } from '../../../policies/credentials/backend-credentials.ts';
import type { RequestIdentity } from '../../../policies/context.ts';
import type { ConfigLifecycle } from '../../../policies/step.ts';

/** The remote kinds; `vendorOrigins` is keyed by the three that call a vendor API. */
export type VendorGuardKind = 'providerAModeration' | 'cloudAGuardrails' | 'cloudCShield';

/** What compiling a remote guard needs of the runtime. */
export interface GuardServices {
  /** Keys, SigV4 and cloud tokens, as for every other upstream call (policies/credentials). */
  readonly credentials: BackendCredentials;
  /** A webhook's `backendKey` to an address, as extAuth's backendRef is resolved. */
  readonly endpoints?: EndpointResolver;
  /** The runtime's HTTP pools to external services (a webhook's connection), shared across config versions. */
  readonly connections?: SharedConnections;
  /** Present when compiled for a runtime: a webhook's pool lease is given back when its config is retired. */
  readonly lifecycle?: ConfigLifecycle;
  /**
   * Where a vendor API is reached instead of its public host (`http(s)://host:port`): a private
   * endpoint, or a test's double. Absent: the vendor's host on 443 over TLS.
   */
  readonly vendorOrigins?: Readonly<Partial<Record<VendorGuardKind, string>>>;
}

/** The entry's `response` with SPEC.md's defaults applied (the compile step computes them). */
export interface GuardCommon {
  readonly rejectStatus: number;
  readonly rejectMessage: string;
}

/** A guard's `policies` as the controller lowers them: the connection and auth members of a BackendPolicy. */
export type GuardPolicies = Pick<BackendPolicy, 'tcp' | 'tls' | 'http' | 'tunnel' | 'auth'>;

/** The guard service gave no usable answer (unreachable, timed out, non-2xx, too large, not the documented shape). */
export class GuardServiceError extends Error {
  override readonly name = 'GuardServiceError';
}

/** Without `policies.http.requestTimeout`: how long a guard service may take to answer. */
export const DEFAULT_GUARD_TIMEOUT_MS = 10_000;

/**
 * The cap on a guard service's answer: 64 KiB plus twice the request sent. Masking services send
 * the text back (possibly longer: markers replace matches), classifiers send a few scores.
 */
export const ANSWER_SLACK_BYTES = 64 * 1024;
export function answerLimit(requestBytes: number): number {
  return ANSWER_SLACK_BYTES + 2 * requestBytes;
}

const NO_IDENTITY: Readonly<RequestIdentity> = Object.freeze({});

/** Where a call goes: scheme, host and port, and the Host header it is signed and sent with. */
export interface GuardTarget {
  readonly origin: string;
  readonly host: string;
  readonly tls: boolean;
}

/** The vendor's public host over TLS, or the configured origin for this kind. */
export function vendorTarget(kind: VendorGuardKind, publicHost: string, services: GuardServices): GuardTarget {
  const override = services.vendorOrigins?.[kind];
  if (override === undefined) return { origin: `https://${publicHost}`, host: publicHost, tls: true };
  const url = new URL(override);
  return { origin: url.origin, host: url.host, tls: url.protocol === 'https:' };
}

/**
 * Connection pools for vendor APIs under connection settings, by settings and origin: guards are
 * compiled again for every config version, and the same settings reuse one pool rather than
 * leave one behind per version (bounded by the distinct settings configured).
 */
const pools = new Map<string, Agent>();

/**
 * The dispatcher for a vendor API under the guard's `policies` (tls, tcp, tunnel, http version):
 * the shared backend-policy connector; undici's global one when the policies change nothing
 * about connecting.
 */
function dispatcherFor(target: GuardTarget, policies: GuardPolicies | undefined): Dispatcher {
  if (!policies || (!policies.tls && !policies.tcp && !policies.tunnel && !policies.http?.version)) return getGlobalDispatcher();
  // A TLS target with no tls member still speaks TLS (system CAs, the host checked); HTTP/1.1 unless HTTP2 is asked for.
  const version = policies.http?.version ?? 'HTTP1';
  const settings = connectionSettings({
    ...policies,
    ...(target.tls && !policies.tls ? { tls: {} } : {}),
    http: { ...policies.http, version },
  } as BackendPolicy);
  if (!settings) return getGlobalDispatcher();
  const key = `${settings.fingerprint} ${version} ${target.origin}`;
  let agent = pools.get(key);
  if (!agent) {
    const hostname = new URL(target.origin).hostname.replace(/^\[|\]$/g, '');
    agent = new Agent({ connect: connectorFor(settings, hostname), allowH2: version === 'HTTP2' });
    pools.set(key, agent);
  }
  return agent;
}

/** One remote guard service: JSON in, JSON out, with the guard's credentials, timeout and answer cap. */
export class GuardClient {
  readonly #what: string;
  readonly #target: GuardTarget;
  readonly #dispatcher: Dispatcher;
  readonly #policies: GuardPolicies | undefined;
  readonly #defaults: CredentialDefaults;
  readonly #services: GuardServices;
  readonly #timeoutMs: number;

  constructor(what: string, target: GuardTarget, policies: GuardPolicies | undefined, defaults: CredentialDefaults, services: GuardServices, dispatcher?: Dispatcher) {
    this.#what = what;
    this.#target = target;
    this.#policies = policies;
    this.#defaults = defaults;
    this.#services = services;
    this.#timeoutMs = policies?.http?.requestTimeoutMs ?? DEFAULT_GUARD_TIMEOUT_MS;
    this.#dispatcher = dispatcher ?? dispatcherFor(target, policies);
  }

  /** POSTs `body` as JSON to `path`; the parsed 2xx answer, or GuardServiceError. */
  async post(path: string, body: unknown, signal: AbortSignal, extraHeaders: Readonly<Record<string, string | string[]>> = {}): Promise<unknown> {
    const payload = Buffer.from(JSON.stringify(body));
    let prepared;
    try {
      prepared = await this.#services.credentials.apply(
        { host: this.#target.host, method: 'POST', path, headers: { ...extraHeaders, 'content-type': 'application/json', accept: 'application/json' }, body: payload },
        this.#policies?.auth, NO_IDENTITY, undefined, this.#defaults,
      );
    } catch (err) {
      throw new GuardServiceError(`${this.#what}: no credential: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
    }
    const timeout = AbortSignal.timeout(this.#timeoutMs);
    let text: string;
    let status: number;
    try {
      const response = await request(`${this.#target.origin}${prepared.path}`, {
        method: 'POST',
        headers: { ...prepared.headers, host: this.#target.host },
        body: payload,
        dispatcher: this.#dispatcher,
        signal: AbortSignal.any([signal, timeout]),
      });
      status = response.statusCode;
      text = await readTextBounded(response.body, answerLimit(payload.length), { what: `${this.#what} answer` });
    } catch (err) {
      const why = timeout.aborted ? `no answer within ${this.#timeoutMs} ms` : err instanceof Error ? err.message : String(err);
      throw new GuardServiceError(`${this.#what}: ${why}`, { cause: err });
    }
    if (status < 200 || status > 299) throw new GuardServiceError(`${this.#what} answered ${status}: ${text.slice(0, 200)}`);
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw new GuardServiceError(`${this.#what} answered with a body that is not JSON`);
    }
  }
}

/** An object member of an answer, for the shape checks every kind makes before it trusts a verdict. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
