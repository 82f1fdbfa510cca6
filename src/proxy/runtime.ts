import type { Registry } from 'prom-client';
import type { Logger } from '../common/logger.ts';
import type { ProxyConfig } from '../ir/types.ts';
import { UpstreamPools } from './policies/backend/pools.ts';
import { BACKEND_HANDLER_FACTORIES } from './handler-factories.ts';
import { BackendHandlers } from './backends/handlers.ts';
import { compileConfigJob, type CompiledBind, type CompiledConfig } from './compile/config.ts';
import { DEFAULT_SLICE_MS, runInSlices, runToEnd } from './compile/slices.ts';
import type { CompiledLifecycle } from './compile/lifecycle.ts';
import { SharedConnections } from './ext/connections.ts';
import { HealthStates } from './policies/backend/health.ts';
import { ProviderHealthBoard } from './llm/gateway/provider-health.ts';
import { registerProviderHealthMetrics } from './llm/gateway/provider-health-metrics.ts';
import type { Telemetry } from './pipeline/exchange.ts';
import { BindServer } from './server/bind-server.ts';
import { SecureContextCache } from './compile/tls-contexts.ts';
import { ProxyMetrics } from './telemetry/metrics.ts';
import { GatewaySessionKeys } from './mcp/session-keys.ts';
import { startupGc } from './startup-gc.ts';

export interface RuntimeOptions {
  logger: Logger;
  /** prom-client registry for the proxy metrics (default: a private one). */
  registry?: Registry;
  /** Default '0.0.0.0'; tests pass '127.0.0.1'. */
  bindAddress?: string;
  /** Map IR ports to real ones; tests return 0 (ephemeral). */
  listenPort?: (irPort: number) => number;
  /** Let several worker processes share ports. */
  reusePort?: boolean;
  /**
   * How long a removed bind may finish its in-flight requests, and how long a replaced config's
   * policy clients stay open for requests still using them (default 30 s).
   */
  drainMs?: number;
  /**
   * The longest the compile of a new config holds the event loop at a time before it lets
   * requests run (default 10 ms; Infinity compiles in one piece, as the benchmark's baseline).
   */
  compileSliceMs?: number;
  /**
   * Run once after the first config is swapped in, before apply() resolves (so before the
   * gateway says ready). Default: startupGc() — a memory-reducing GC when the young generation
   * grew while the config was received and compiled (startup-gc.ts; SWITCHBOARD_STARTUP_GC=0 off).
   */
  afterFirstConfig?: (() => void) | undefined;
}

const DEFAULT_DRAIN_MS = 30_000;
const DEFAULT_CLOSE_GRACE_MS = 10_000;

/**
 * The data plane: executes a ProxyConfig. Each apply compiles the whole IR into route tables,
 * filter chains and pools — in slices of a few milliseconds, between which requests are served on
 * the current config — then swaps it in one synchronous step, so a request runs entirely on the
 * config it started with. Binds that stay keep their sockets; new ones open; removed ones drain.
 */
export class ProxyRuntime {
  readonly #opts: RuntimeOptions;
  readonly #telemetry: Telemetry;
  readonly #pools = new UpstreamPools();
  readonly #secureContexts = new SecureContextCache();
  readonly #handlers: BackendHandlers;
  /** By IR port. */
  readonly #servers = new Map<number, BindServer>();
  readonly #draining = new Set<Promise<void>>();
  /** Connections to ext_authz / ext_proc / rate-limit services, reused by the next config. */
  readonly #connections = new SharedConnections();
  readonly #retiring = new Set<CompiledLifecycle>();
  /** Passive health (scores, evictions) of endpoints, carried from one config to the next. */
  readonly #healthStates = new HealthStates();
  /** AI providers' health (scores, latency, evictions), shared by the LLM handlers; shown by the admin API and metrics. */
  readonly #providerHealth = new ProviderHealthBoard();
  /** The served Gateways' MCP session keys, read by MCP handlers per request. */
  readonly #sessionKeys = new GatewaySessionKeys();
  #compiled: CompiledConfig | undefined;
  #config: ProxyConfig | undefined;
  #ready = false;
  #closed = false;
  #queue: Promise<unknown> = Promise.resolve();

  constructor(opts: RuntimeOptions) {
    this.#opts = opts;
    this.#telemetry = { logger: opts.logger, metrics: new ProxyMetrics(opts.registry) };
    this.#handlers = new BackendHandlers(BACKEND_HANDLER_FACTORIES, { logger: opts.logger, providerHealth: this.#providerHealth, sessionKeys: this.#sessionKeys });
    if (opts.registry) registerProviderHealthMetrics(opts.registry, this.#providerHealth);
  }

  /** Compile and swap atomically; opens new binds, closes removed ones (draining), keeps unchanged ones. */
  apply(config: ProxyConfig): Promise<{ version: string; errors: string[] }> {
    const run = this.#queue.then(() => this.#apply(config));
    this.#queue = run.catch(() => undefined);
    return run;
  }

  /** The real port a Bind's IR port is listening on (for tests with port 0). */
  portOf(irPort: number): number | undefined {
    return this.#servers.get(irPort)?.port;
  }

  /** The config currently served, for /config_dump. */
  current(): ProxyConfig | undefined {
    return this.#config;
  }

  /** Every AI backend's provider health now (admin `/providers`). */
  providerHealth(): ReturnType<ProviderHealthBoard['snapshot']> {
    return this.#providerHealth.snapshot();
  }

  /** A config applied and every bind listening. */
  ready(): boolean {
    return this.#ready && !this.#closed;
  }

  /** Stop accepting, drain in-flight requests for up to `graceMs`, then force-close. */
  async close(opts: { graceMs?: number } = {}): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#queue;
    const graceMs = opts.graceMs ?? DEFAULT_CLOSE_GRACE_MS;
    const servers = [...this.#servers.values()];
    this.#servers.clear();
    await Promise.all(servers.map((s) => s.drain(graceMs)));
    // Every bind has drained: nothing can still use a config's policy clients.
    if (this.#compiled) this.#retire(this.#compiled.lifecycle);
    for (const lifecycle of this.#retiring) lifecycle.hurry();
    await Promise.all(this.#draining);
    this.#connections.closeAll();
    await Promise.all([this.#pools.close(graceMs), this.#handlers.close()]);
  }

  async #apply(config: ProxyConfig): Promise<{ version: string; errors: string[] }> {
    if (this.#closed) return { version: config.version, errors: ['the proxy runtime is closed'] };
    // In slices, so requests keep being served by the current config meanwhile; nothing compiled
    // is visible to them until the synchronous swap below. The first config has no requests to
    // protect (no bind is open yet): it compiles in one piece, since a turn of the loop between
    // slices would only let other work in ahead of ready (issue 15: start-up at 10k routes); the
    // admin server's probes on this thread wait for it, as they wait for it to be ready anyway.
    const job = compileConfigJob(config, {
      pools: this.#pools, secureContexts: this.#secureContexts, logger: this.#telemetry.logger, handlers: this.#handlers, connections: this.#connections, healthStates: this.#healthStates,
    });
    const { compiled, errors } = this.#servers.size === 0 ? runToEnd(job) : await runInSlices(job, this.#opts.compileSliceMs ?? DEFAULT_SLICE_MS);
    this.#secureContexts.sweep();

    const wanted = new Map<number, CompiledBind>();
    for (const bind of compiled.binds) {
      if (wanted.has(bind.irPort)) errors.push(`bind ${bind.key}: port ${bind.irPort} is already used by another bind`);
      else wanted.set(bind.irPort, bind);
    }

    // Close what goes away (or changes protocol) first, so its port is free to reopen.
    for (const [port, server] of this.#servers) {
      const next = wanted.get(port);
      if (next && next.protocol === server.protocol) continue;
      this.#servers.delete(port);
      this.#drainInBackground(server);
    }

    const opened = new Map<number, BindServer>();
    for (const [port, bind] of wanted) {
      if (this.#servers.has(port)) continue;
      try {
        opened.set(port, await BindServer.open(bind, this.#telemetry, {
          host: this.#opts.bindAddress ?? '0.0.0.0',
          port: this.#opts.listenPort?.(port) ?? port,
          reusePort: this.#opts.reusePort ?? false,
          bindFor: (irPort) => this.#servers.get(irPort),
        }));
      } catch (err) {
        errors.push(`bind ${bind.key}: cannot listen on port ${port}: ${(err as Error).message}`);
      }
    }

    // The swap itself: synchronous, so no request sees half of it.
    for (const [port, server] of this.#servers) server.swap(wanted.get(port) as CompiledBind);
    for (const [port, server] of opened) this.#servers.set(port, server);
    this.#config = config;
    this.#sessionKeys.update(config);
    const previous = this.#compiled;
    this.#compiled = compiled;
    // Requests in flight keep the old config; its policy clients close after the last of them.
    if (previous) this.#retire(previous.lifecycle);
    this.#healthStates.retainUsed();
    this.#pools.retainOnly(compiled.dispatchers);
    this.#handlers.retainOnly(compiled.handlers);
    this.#ready = [...wanted.keys()].every((port) => this.#servers.get(port)?.listening === true);

    if (previous === undefined) this.#afterFirstConfig();
    const log = this.#telemetry.logger;
    if (errors.length > 0) log.warn({ version: config.version, errors }, 'proxy config applied with errors');
    else log.info({ version: config.version, binds: wanted.size }, 'proxy config applied');
    return { version: config.version, errors };
  }

  #afterFirstConfig(): void {
    const collect = 'afterFirstConfig' in this.#opts ? this.#opts.afterFirstConfig : startupGc();
    try {
      collect?.();
    } catch (err) {
      // An optimisation only: the config is applied either way.
      this.#telemetry.logger.debug({ err }, 'the memory-reducing GC after the first config failed');
    }
  }

  #retire(lifecycle: CompiledLifecycle): void {
    if (lifecycle.empty) return;
    this.#retiring.add(lifecycle);
    const log = this.#telemetry.logger;
    const done = lifecycle.retire(this.#opts.drainMs ?? DEFAULT_DRAIN_MS, (err) => log.warn({ err }, 'closing a replaced config\'s policy clients failed'));
    this.#draining.add(done);
    void done.finally(() => {
      this.#draining.delete(done);
      this.#retiring.delete(lifecycle);
    });
  }

  #drainInBackground(server: BindServer): void {
    const done = server.drain(this.#opts.drainMs ?? DEFAULT_DRAIN_MS).catch((err: unknown) => {
      this.#telemetry.logger.warn({ err }, 'draining a removed bind failed');
    });
    this.#draining.add(done);
    void done.finally(() => this.#draining.delete(done));
  }
}
