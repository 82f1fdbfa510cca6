/**
 * The proxy side of config distribution: holds a stream to the controller, rebuilds the
 * ProxyConfig from the resources it receives, applies it to the proxy runtime (the same swap
 * embedded mode uses: binds that stay keep their connections), and answers each response with an
 * ACK, or a NACK when validation (src/ir/validate.ts) or the runtime rejects it — then it keeps
 * serving the last good config. While the controller is away it keeps serving and reconnects with
 * jittered exponential backoff, telling the controller what it holds so only differences come.
 */
import { create } from '@bufbuild/protobuf';
import { createClient, type Client } from '@connectrpc/connect';
import { createGrpcTransport } from '@connectrpc/connect-node';
import { createWritableIterable } from '@connectrpc/connect/protocol';
import type http2 from 'node:http2';
import { Counter, Gauge, type Registry } from 'prom-client';
import { setLoggedSecrets, type Logger } from '../../common/logger.ts';
import type { ProxyConfig } from '../../ir/types.ts';
import { validateConfig } from '../../ir/validate.ts';
import type { ConfigRuntime } from '../types.ts';
import { assembleConfig, patchAssembledConfig, ResourceCache } from './assemble.ts';
import { ConfigDistribution, ConfigRequestSchema, type ConfigRequest, type ConfigResponse } from './gen/v1/config_pb.js';
import { sliceVersion, type Delta } from './split.ts';
import { NEWEST_VERSION_SCHEME, SystemVersionScheme } from './version.ts';
import { fromWire, toWireVersions } from './wire.ts';

/** A config response may carry every resource of a large gateway (10k routes ≈ tens of MB). */
export const MAX_RESPONSE_BYTES = 256 * 1024 * 1024;

export interface RemoteClientOptions {
  /** `http://host:9978` (plaintext) or `https://host:9978` (tls). */
  readonly controller: string;
  /** PEM CA bundle the controller's certificate must chain to (https); absent: the system's. */
  readonly caPem?: string;
  /** The name the controller's certificate must carry, when it differs from the URL's host. */
  readonly serverName?: string;
  /** Read before every connection attempt: projected ServiceAccount tokens rotate. */
  readonly token: () => Promise<string>;
  readonly namespace: string;
  readonly gateways: readonly string[];
  readonly proxyId: string;
  readonly runtime: ConfigRuntime;
  readonly logger: Logger;
  readonly registry: Registry;
  readonly backoff?: { readonly initialMs?: number; readonly maxMs?: number };
  /** HTTP/2 ping interval (default 10 s): keeps the controller's idle timeout away, notices a vanished controller. */
  readonly keepaliveMs?: number;
}

/** What happened to one response. */
export type ApplyOutcome = { readonly ok: true } | { readonly ok: false; readonly errors: readonly string[] };

export class RemoteConfigClient {
  readonly #options: RemoteClientOptions;
  readonly #client: Client<typeof ConfigDistribution>;
  readonly #cache = new ResourceCache();
  readonly #metrics: ClientMetrics;
  #lastGood: ProxyConfig | undefined;
  #servingRedactions: readonly string[] = [];
  #abort = new AbortController();
  #loop: Promise<void> | undefined;
  #connected = false;

  constructor(options: RemoteClientOptions) {
    this.#options = options;
    const nodeOptions: http2.SecureClientSessionOptions = {
      ...(options.caPem ? { ca: options.caPem } : {}),
      ...(options.serverName ? { servername: options.serverName } : {}),
    };
    this.#client = createClient(ConfigDistribution, createGrpcTransport({
      baseUrl: options.controller,
      nodeOptions,
      readMaxBytes: MAX_RESPONSE_BYTES,
      // A controller that vanished without closing the connection is noticed within ~15 s.
      pingIntervalMs: options.keepaliveMs ?? 10_000,
      pingTimeoutMs: 5_000,
      pingIdleConnection: true,
    }));
    this.#metrics = new ClientMetrics(options.registry);
  }

  /** The config served now (the last one applied and acknowledged). */
  current(): ProxyConfig | undefined {
    return this.#lastGood;
  }

  isConnected(): boolean {
    return this.#connected;
  }

  /** Starts connecting (and reconnecting) in the background until close(). */
  start(): void {
    this.#loop ??= this.#run();
  }

  /** Ends the stream; the runtime is the caller's to close. */
  async close(): Promise<void> {
    this.#abort.abort();
    await this.#loop;
  }

  async #run(): Promise<void> {
    const { logger } = this.#options;
    const initialMs = this.#options.backoff?.initialMs ?? 200;
    const maxMs = this.#options.backoff?.maxMs ?? 15_000;
    let delay = initialMs;
    const signal = this.#abort.signal;
    while (!signal.aborted) {
      let received = false;
      try {
        await this.#stream(signal, () => {
          received = true;
          delay = initialMs;
        });
        if (!signal.aborted) logger.warn('the controller ended the config stream; reconnecting');
      } catch (err) {
        if (signal.aborted) break;
        logger.warn({ err: (err as Error).message, retryInMs: delay }, 'config stream failed; serving the last good config and reconnecting');
      } finally {
        this.#setConnected(false);
      }
      if (signal.aborted) break;
      this.#metrics.reconnects.inc();
      // Full jitter: a fleet that lost its controller does not come back in lockstep.
      await sleep(received ? initialMs * Math.random() : delay * (0.5 + Math.random() / 2), signal);
      if (!received) delay = Math.min(maxMs, delay * 2);
    }
  }

  async #stream(signal: AbortSignal, onResponse: () => void): Promise<void> {
    const { namespace, gateways, proxyId } = this.#options;
    const token = await this.#options.token();
    const requests = createWritableIterable<ConfigRequest>();
    const send = (request: ConfigRequest): void => void requests.write(request).catch(() => undefined);
    send(create(ConfigRequestSchema, {
      kind: { case: 'subscribe', value: { namespace, gateways: [...gateways], proxyId, initialResources: toWireVersions(this.#cache.versions()), systemVersionScheme: NEWEST_VERSION_SCHEME } },
    }));
    try {
      for await (const response of this.#client.streamConfig(requests, { signal, headers: { authorization: `Bearer ${token}` } })) {
        this.#setConnected(true);
        onResponse();
        const outcome = await this.apply(response);
        send(create(ConfigRequestSchema, outcome.ok
          ? { kind: { case: 'ack', value: { nonce: response.nonce, systemVersion: response.systemVersion } } }
          : { kind: { case: 'nack', value: { nonce: response.nonce, systemVersion: response.systemVersion, errors: [...outcome.errors] } } }));
      }
    } finally {
      requests.close();
    }
  }

  /**
   * Applies one response: rebuilt, checked, applied; on any failure the last good config is
   * served again and what is held stays as it was. Exposed for tests.
   */
  async apply(response: ConfigResponse): Promise<ApplyOutcome> {
    const { logger, runtime } = this.#options;
    // A resync after reconnecting that finds the proxy in step: nothing to apply.
    if (response.resources.length === 0 && response.removedResources.length === 0 && response.systemVersion === this.#lastGood?.version) return { ok: true };
    let config: ProxyConfig;
    let next: ReturnType<ResourceCache['preview']>;
    try {
      const delta = fromWire(response.resources, response.removedResources);
      next = this.#cache.preview(delta);
      if (this.#versionOf(next, delta, response.systemVersionScheme) !== response.systemVersion) throw new Error(`the resources held after this update do not make system version ${response.systemVersion}`);
      // What is held is what the last good config was made of (both change together, below).
      config = this.#lastGood ? patchAssembledConfig(this.#lastGood, next, delta, response.systemVersion) : assembleConfig(next, response.systemVersion);
    } catch (err) {
      return this.#refused(response, [(err as Error).message]);
    }
    // The last good config passed this check: its Routes and Backends the update left alone (the same objects) are not walked again.
    const problems = validateConfig(config, this.#lastGood);
    if (problems.length > 0) return this.#refused(response, problems.slice(0, 20).map((p) => `${p.path}: ${p.message}`));

    // As in embedded mode: scrubbed of the new config's secrets before it is compiled (an error
    // may quote one), and of the old one's until the new one serves.
    setLoggedSecrets([...response.logRedactions, ...this.#servingRedactions]);
    let errors: readonly string[];
    try {
      errors = (await runtime.apply(config)).errors.map(describe);
    } catch (err) {
      errors = [`applying config ${config.version} failed: ${(err as Error).message}`];
    }
    if (errors.length > 0) {
      // The runtime swapped in what it could: go back to the last good config whole.
      if (this.#lastGood) await runtime.apply(this.#lastGood).catch((err: unknown) => logger.error({ err }, 'restoring the last good config failed'));
      setLoggedSecrets(this.#servingRedactions);
      return this.#refused(response, errors);
    }
    this.#cache.commit(next);
    this.#lastGood = config;
    this.#servingRedactions = response.logRedactions;
    setLoggedSecrets(this.#servingRedactions);
    this.#metrics.updates.inc({ result: 'ack' });
    this.#metrics.info(config.version);
    logger.info({ version: config.version, controllerVersion: response.controllerVersion, changed: response.resources.length, removed: response.removedResources.length }, 'config from the controller applied');
    return { ok: true };
  }

  /** The system version of `next` in the scheme the controller chose (SORTED when it predates schemes). */
  #versionOf(next: ReturnType<ResourceCache['preview']>, delta: Delta, scheme: SystemVersionScheme): string {
    if (scheme === SystemVersionScheme.SUM) return this.#cache.sumVersion(next, delta);
    if (scheme === SystemVersionScheme.SORTED) return sliceVersion(new Map([...next].map(([id, held]) => [id, held.resource.version])));
    // Never asked for: refused (NACK) rather than guessed.
    throw new Error(`system version scheme ${String(scheme)} is not one this proxy subscribed with`);
  }

  #refused(response: ConfigResponse, errors: readonly string[]): ApplyOutcome {
    this.#metrics.updates.inc({ result: 'nack' });
    this.#options.logger.error({ version: response.systemVersion, controllerVersion: response.controllerVersion, errors, serving: this.#lastGood?.version }, 'config from the controller refused (NACK); still serving the last good config');
    return { ok: false, errors };
  }

  #setConnected(connected: boolean): void {
    this.#connected = connected;
    this.#metrics.connected.set(connected ? 1 : 0);
  }
}

class ClientMetrics {
  readonly connected: Gauge;
  readonly updates: Counter<'result'>;
  readonly reconnects: Counter;
  readonly #version: Gauge<'version'>;

  constructor(registry: Registry) {
    this.connected = new Gauge({ name: 'switchboard_proxy_controller_connected', help: '1 while the config stream to the controller is up.', registers: [registry] });
    this.updates = new Counter({ name: 'switchboard_proxy_config_updates_total', help: 'Config updates from the controller, by result (ack: applied, nack: refused).', labelNames: ['result'], registers: [registry] });
    this.reconnects = new Counter({ name: 'switchboard_proxy_controller_reconnects_total', help: 'Times the config stream to the controller was lost and retried.', registers: [registry] });
    this.#version = new Gauge({ name: 'switchboard_proxy_config_info', help: 'The config version served (value 1).', labelNames: ['version'], registers: [registry] });
  }

  info(version: string): void {
    this.#version.reset();
    this.#version.set({ version }, 1);
  }
}

function describe(error: unknown): string {
  if (error instanceof Error) return error.message;
  return typeof error === 'string' ? error : JSON.stringify(error);
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
  });
}
