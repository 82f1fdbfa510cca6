/**
 * The controller side of config distribution: a Distributor whose proxies run elsewhere and hold
 * a gRPC stream to it (proto/switchboard/config/v1/config.proto). Each publish is cut per proxy
 * into the resources of the gateways it serves (split.ts) and only what changed since the proxy's
 * last ACK is sent (session.ts).
 */
import { Code, ConnectError, type ConnectRouter, type HandlerContext } from '@connectrpc/connect';
import { connectNodeAdapter } from '@connectrpc/connect-node';
import { createWritableIterable } from '@connectrpc/connect/protocol';
import type { Registry } from 'prom-client';
import type { Logger } from '../../common/logger.ts';
import type { ProxyConfig } from '../../ir/types.ts';
import type { ApplyResult, Distributor } from '../types.ts';
import { bearerToken, serviceAccountOf, type Authenticator, type ProxyIdentity } from './auth.ts';
import { ConfigDistribution, type ConfigRequest, type ConfigResponse, type Subscribe } from './gen/v1/config_pb.js';
import { DistributionMetrics } from './server-metrics.ts';
import { ProxySession, type SliceSource } from './session.ts';
import { nextSlice } from './slice-patch.ts';
import { gatewayId, secretValuesOf, type GatewayRef, type ProxySlice, type SecretValues } from './split.ts';
import { createConfigListener, type ConfigListener, type ServerTls, type TransportMode } from './transport.ts';
import { schemeFor } from './version.ts';
import { fromWireVersions } from './wire.ts';

export const DEFAULT_XDS_PORT = 9978;
/** Requests are ACKs, NACKs and one subscribe (whose initial resources list ~60 bytes per resource). */
export const MAX_REQUEST_BYTES = 4 * 1024 * 1024;
/** A proxy serves a handful of gateways; the cap bounds the work a subscribe can ask for. */
export const MAX_GATEWAYS_PER_PROXY = 64;
const NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const MAX_NAME_CHARS = 253;

export interface ProxyStatus {
  readonly proxyId: string;
  readonly serviceAccount: string;
  readonly gateways: readonly GatewayRef[];
  /** The slice version the proxy acknowledged last (undefined: none yet on this stream). */
  readonly ackedVersion: string | undefined;
  /** The reasons of its last NACK, until it acknowledges again. */
  readonly lastError: readonly string[] | undefined;
}

export interface RemoteDistributorOptions {
  readonly host?: string;
  /** Default 9978 (SPEC.md's `agwGrpc` port); 0 picks a free one (tests). */
  readonly port?: number;
  readonly mode: TransportMode;
  /** Required for `tls` and `either`. */
  readonly tls?: ServerTls;
  readonly authenticator: Authenticator;
  readonly logger: Logger;
  readonly registry: Registry;
  /** Close a proxy's connection after this long without a frame (default 45 s; proxies ping every 10 s). */
  readonly sessionIdleTimeoutMs?: number;
  /** A proxy refused the config of `gateway` (it keeps serving its last good one): for the Gateway's status. */
  readonly onNack?: (gateway: GatewayRef, proxyId: string, error: string) => void;
  /** A proxy of `gateway` now serves `version` (cut from the controller's `controllerVersion`): for `Programmed`. */
  readonly onAck?: (gateway: GatewayRef, proxyId: string, version: { readonly version: string; readonly controllerVersion: string }) => void;
  /** A proxy of `gateway` closed its stream (or lost it). */
  readonly onDisconnect?: (gateway: GatewayRef, proxyId: string) => void;
}

export class RemoteDistributor implements Distributor {
  readonly #options: RemoteDistributorOptions;
  readonly #metrics: DistributionMetrics;
  readonly #sessions = new Set<ProxySession>();
  #listener: ConfigListener | undefined;
  #port: number | undefined;
  #current: { readonly config: ProxyConfig; readonly secretValues: SecretValues; readonly gateways: ReadonlySet<string> } | undefined;
  /** Slices of the current config by gateway set: proxies of the same gateways share one. */
  #slices = new Map<string, { readonly slice: ProxySlice; readonly redactions: readonly string[]; readonly controllerVersion: string }>();
  /** The slices of the config published before the current one: reused for gateways a change does not concern (reuseSlice). */
  #previousSlices = new Map<string, { readonly slice: ProxySlice; readonly redactions: readonly string[]; readonly controllerVersion: string }>();
  readonly #source: SliceSource = { slice: (gateways) => this.#slice(gateways) };

  constructor(options: RemoteDistributorOptions) {
    this.#options = options;
    this.#metrics = new DistributionMetrics(options.registry);
  }

  /** The port the gRPC server listens on (after start). */
  get port(): number | undefined {
    return this.#port;
  }

  async start(): Promise<void> {
    const handler = connectNodeAdapter({
      routes: (router: ConnectRouter) => router.service(ConfigDistribution, { streamConfig: (requests, context) => this.#stream(requests, context) }),
      grpc: true,
      grpcWeb: false,
      connect: false,
      readMaxBytes: MAX_REQUEST_BYTES,
    });
    const listener = createConfigListener(this.#options.mode, handler, this.#options.tls, this.#options.sessionIdleTimeoutMs);
    const address = await listener.listen(this.#options.port ?? DEFAULT_XDS_PORT, this.#options.host ?? '0.0.0.0');
    this.#listener = listener;
    this.#port = address.port;
    this.#options.logger.info({ address: `${address.address}:${address.port}`, mode: this.#options.mode }, 'config distribution listening');
  }

  /**
   * Hands `config` to every connected proxy and resolves at once: a proxy elsewhere answers when
   * it can, and its ACK or NACK is reported through onAck / onNack (and proxies()), so a slow or
   * stuck proxy never holds up the controller.
   */
  publish(config: ProxyConfig, secretValues: readonly string[] = []): Promise<ApplyResult> {
    const gateways = new Set<string>();
    for (const bind of config.binds) for (const listener of bind.listeners) gateways.add(gatewayId(listener.gateway));
    // The same object while the values stay the same: each resource is scanned for them once (split.ts).
    this.#previousSlices = this.#slices;
    this.#current = { config, secretValues: secretValuesOf(secretValues, this.#current?.secretValues), gateways };
    this.#slices = new Map();
    for (const session of this.#sessions) session.push();
    return Promise.resolve({ version: config.version, errors: [] });
  }

  /** Serving: listening, with a config to hand out. */
  isReady(): boolean {
    return this.#listener !== undefined && this.#current !== undefined;
  }

  /** The proxies connected now and what each acknowledged. */
  proxies(): ProxyStatus[] {
    return [...this.#sessions].map((s) => ({ proxyId: s.proxyId, serviceAccount: s.serviceAccount, gateways: s.gateways, ackedVersion: s.ackedVersion, lastError: s.lastError }));
  }

  metrics(): Promise<string> {
    return this.#options.registry.metrics();
  }

  get metricsContentType(): string {
    return this.#options.registry.contentType;
  }

  /** Ends every stream (proxies keep serving and reconnect to another replica) and stops listening. */
  async close(): Promise<void> {
    const listener = this.#listener;
    this.#listener = undefined;
    await listener?.close();
  }

  #slice(gateways: readonly GatewayRef[]): ReturnType<SliceSource['slice']> {
    const current = this.#current;
    if (!current) return undefined;
    const key = gateways.map(gatewayId).sort().join('\n');
    let entry = this.#slices.get(key);
    if (!entry) {
      const before = this.#previousSlices.get(key)?.slice;
      // Kept, patched from the previous slice, or cut whole (slice-patch.ts); `before` is not read again.
      const slice = nextSlice(before, current.config, gateways, current.secretValues);
      entry = { slice, redactions: slice.redactions, controllerVersion: current.config.version };
      this.#slices.set(key, entry);
    }
    return entry;
  }

  async *#stream(requests: AsyncIterable<ConfigRequest>, context: HandlerContext): AsyncIterable<ConfigResponse> {
    const identity = await this.#authenticate(context);
    const incoming = requests[Symbol.asyncIterator]();
    const first = await incoming.next();
    if (first.done || first.value.kind.case !== 'subscribe') throw this.#refuse('invalid', Code.InvalidArgument, 'the first request must be a subscribe');
    const subscribe = first.value.kind.value;
    const gateways = this.#authorize(identity, subscribe);

    const outbound = createWritableIterable<ConfigResponse>();
    const { logger } = this.#options;
    const proxyId = subscribe.proxyId.slice(0, MAX_NAME_CHARS) || identity.username;
    const log = logger.child({ proxy: proxyId, gateways: gateways.map(gatewayId) });
    const session = new ProxySession({
      proxyId, namespace: identity.namespace, gateways, serviceAccount: identity.username,
      held: fromWireVersions(subscribe.initialResources),
      scheme: schemeFor(subscribe.systemVersionScheme),
      source: this.#source,
      send: (response) => void outbound.write(response).catch(() => undefined),
      events: {
        sent: (_, count) => this.#metrics.sent(count),
        acked: (_, version, controllerVersion) => {
          this.#metrics.answered('ack');
          log.debug({ version, controllerVersion }, 'proxy acknowledged config');
          for (const gateway of gateways) this.#options.onAck?.(gateway, proxyId, { version, controllerVersion });
        },
        nacked: (_, version, errors) => {
          this.#metrics.answered('nack');
          log.warn({ version, errors }, 'proxy refused config (NACK); it keeps serving its last good one');
          for (const gateway of gateways) {
            // Labelled only by gateways the cluster has: a proxy may subscribe to any name.
            if (this.#current?.gateways.has(gatewayId(gateway))) this.#metrics.nack(gateway);
            this.#options.onNack?.(gateway, proxyId, errors.join('; '));
          }
        },
        ignored: (_, why) => log.warn({ why }, 'config stream request ignored'),
      },
    });

    // The proxy went away: end the response stream too (the read loop may not notice first).
    context.signal.addEventListener('abort', () => outbound.close(), { once: true });
    this.#sessions.add(session);
    this.#metrics.connected(1);
    log.info('proxy connected');
    const reading = (async () => {
      for (let next = await incoming.next(); !next.done; next = await incoming.next()) session.receive(next.value);
    })().catch((err: unknown) => log.debug({ err: (err as Error).message }, 'config stream read ended')).finally(() => outbound.close());
    try {
      session.push();
      yield* outbound;
    } finally {
      this.#sessions.delete(session);
      this.#metrics.connected(-1);
      outbound.close();
      void reading;
      log.info('proxy disconnected');
      for (const gateway of gateways) this.#options.onDisconnect?.(gateway, proxyId);
    }
  }

  async #authenticate(context: HandlerContext): Promise<ProxyIdentity> {
    const token = bearerToken(context.requestHeader.get('authorization'));
    if (token === undefined) throw this.#refuse('unauthenticated', Code.Unauthenticated, 'a ServiceAccount token is required (authorization: Bearer <token>)');
    let username: string | undefined;
    try {
      username = await this.#options.authenticator.authenticate(token);
    } catch (err) {
      // Fail closed: a token nobody could review is not a valid one.
      this.#options.logger.error({ err: (err as Error).message }, 'cannot review a proxy token; refusing the stream');
      throw this.#refuse('unavailable', Code.Unavailable, 'the controller cannot review tokens right now');
    }
    if (username === undefined) throw this.#refuse('unauthenticated', Code.Unauthenticated, 'the token is not valid');
    const identity = serviceAccountOf(username);
    if (!identity) throw this.#refuse('permission_denied', Code.PermissionDenied, `${username} is not a ServiceAccount; only proxies may stream config`);
    return identity;
  }

  /** The gateways a subscribe asks for, if its ServiceAccount may have them: those of its own namespace. */
  #authorize(identity: ProxyIdentity, subscribe: Subscribe): GatewayRef[] {
    if (subscribe.namespace !== identity.namespace) {
      throw this.#refuse('permission_denied', Code.PermissionDenied, `${identity.username} may only serve gateways of namespace ${identity.namespace}, not ${JSON.stringify(subscribe.namespace.slice(0, MAX_NAME_CHARS))}`);
    }
    const names = [...new Set(subscribe.gateways)];
    if (names.length === 0 || names.length > MAX_GATEWAYS_PER_PROXY) throw this.#refuse('invalid', Code.InvalidArgument, `a proxy serves 1 to ${MAX_GATEWAYS_PER_PROXY} gateways, got ${names.length}`);
    const bad = names.find((n) => n.length > MAX_NAME_CHARS || !NAME.test(n));
    if (bad !== undefined) throw this.#refuse('invalid', Code.InvalidArgument, `${JSON.stringify(bad.slice(0, MAX_NAME_CHARS))} is not a Gateway name`);
    return names.map((name) => ({ namespace: identity.namespace, name }));
  }

  #refuse(reason: Parameters<DistributionMetrics['refused']>[0], code: Code, message: string): ConnectError {
    this.#metrics.refused(reason);
    this.#options.logger.warn({ reason, message }, 'config stream refused');
    return new ConnectError(message, code);
  }
}
