/**
 * Leader election on a coordination.k8s.io/v1 Lease, the way client-go's leaderelection does it
 * (client-node has no elector):
 *
 * - a candidate reads the Lease every `retryPeriodMs`; it takes it when there is none, when it is
 *   released (no holder), or when its record has not changed for `leaseDurationMs` *as measured on
 *   this candidate's clock* (the holder's renewTime is never compared with our clock, so clock skew
 *   between replicas cannot make two leaders);
 * - every write is an update conditioned on the resourceVersion read (or a create), so of two
 *   candidates racing for the same Lease exactly one wins (the other gets 409);
 * - the leader renews every `retryPeriodMs` and steps down when it could not renew for
 *   `renewDeadlineMs` (< leaseDurationMs, so it has stopped acting before anyone may take over);
 * - `stop()` releases the Lease (empty holder) so a successor takes over at once.
 */
import type { Logger } from '../../common/logger.ts';
import { KubeApiError, type KubeClient } from './client.ts';

export interface LeaseSpec {
  holderIdentity?: string;
  leaseDurationSeconds?: number;
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions?: number;
}

interface Lease {
  apiVersion: 'coordination.k8s.io/v1';
  kind: 'Lease';
  metadata: { name: string; namespace: string; resourceVersion?: string };
  spec: LeaseSpec;
}

export interface LeaderElectorOptions {
  readonly client: KubeClient;
  readonly logger: Logger;
  readonly namespace: string;
  readonly name: string;
  /** Unique per replica: the pod name, plus a random suffix so a restarted pod is a new holder. */
  readonly identity: string;
  readonly leaseDurationMs?: number;
  readonly renewDeadlineMs?: number;
  readonly retryPeriodMs?: number;
  readonly onStartedLeading?: () => void;
  readonly onStoppedLeading?: () => void;
  readonly now?: () => number;
}

export const DEFAULT_LEASE_DURATION_MS = 15_000;
export const DEFAULT_RENEW_DEADLINE_MS = 10_000;
export const DEFAULT_RETRY_PERIOD_MS = 2_000;

export class LeaderElector {
  readonly #options: LeaderElectorOptions;
  readonly #now: () => number;
  #leader = false;
  #timer: NodeJS.Timeout | undefined;
  #running = false;
  #tick: Promise<void> | undefined;
  /** The record last read and when (our clock) it last changed. */
  #observed: { key: string; at: number } | undefined;
  #lastRenew = 0;

  constructor(options: LeaderElectorOptions) {
    if ((options.renewDeadlineMs ?? DEFAULT_RENEW_DEADLINE_MS) >= (options.leaseDurationMs ?? DEFAULT_LEASE_DURATION_MS)) {
      throw new Error('the renew deadline must be shorter than the lease duration');
    }
    this.#options = options;
    this.#now = options.now ?? Date.now;
  }

  isLeader(): boolean {
    return this.#leader;
  }

  /** Starts campaigning; resolves after the first attempt (leader or not). */
  async start(): Promise<void> {
    this.#running = true;
    await this.#attempt();
  }

  /** Stops campaigning; a leader steps down and releases the Lease. */
  async stop(): Promise<void> {
    this.#running = false;
    clearTimeout(this.#timer);
    await this.#tick;
    if (this.#leader) this.#setLeader(false);
    // Released even when not (or no longer) leading here: an attempt still in flight at stop() may
    // have taken the Lease after all.
    try {
      const lease = await this.#get();
      if (lease?.spec.holderIdentity === this.#options.identity) {
        await this.#put({ ...lease, spec: { ...lease.spec, holderIdentity: '', leaseDurationSeconds: 1, renewTime: microTime(this.#now()) } });
      }
    } catch (err) {
      this.#options.logger.warn({ err: (err as Error).message }, 'could not release the leader lease; the next leader waits for it to expire');
    }
  }

  /** Stops without releasing, as a crashed process would (tests). */
  abandon(): void {
    this.#running = false;
    clearTimeout(this.#timer);
    this.#leader = false;
  }

  async #attempt(): Promise<void> {
    if (!this.#running) return;
    this.#tick = this.#tryAcquireOrRenew();
    await this.#tick;
    this.#tick = undefined;
    if (!this.#running) return;
    this.#timer = setTimeout(() => void this.#attempt(), this.#options.retryPeriodMs ?? DEFAULT_RETRY_PERIOD_MS);
    this.#timer.unref();
  }

  async #tryAcquireOrRenew(): Promise<void> {
    const now = this.#now();
    const { identity, logger } = this.#options;
    const durationMs = this.#options.leaseDurationMs ?? DEFAULT_LEASE_DURATION_MS;
    try {
      const lease = await this.#get();
      if (!lease) {
        await this.#create({ holderIdentity: identity, leaseDurationSeconds: Math.ceil(durationMs / 1000), acquireTime: microTime(now), renewTime: microTime(now), leaseTransitions: 0 });
        this.#renewed(now);
        return;
      }
      const key = JSON.stringify([lease.spec.holderIdentity, lease.spec.renewTime, lease.metadata.resourceVersion]);
      if (this.#observed?.key !== key) this.#observed = { key, at: now };
      const holder = lease.spec.holderIdentity ?? '';
      const leaseMs = (lease.spec.leaseDurationSeconds ?? Math.ceil(durationMs / 1000)) * 1000;
      const heldByOther = holder !== '' && holder !== identity;
      if (heldByOther && this.#observed.at + leaseMs > now) {
        this.#lost(now);
        return;
      }
      const spec: LeaseSpec = holder === identity
        ? { ...lease.spec, renewTime: microTime(now), leaseDurationSeconds: Math.ceil(durationMs / 1000) }
        : { holderIdentity: identity, leaseDurationSeconds: Math.ceil(durationMs / 1000), acquireTime: microTime(now), renewTime: microTime(now), leaseTransitions: (lease.spec.leaseTransitions ?? 0) + 1 };
      const updated = await this.#put({ ...lease, spec });
      this.#observed = { key: JSON.stringify([updated.spec.holderIdentity, updated.spec.renewTime, updated.metadata.resourceVersion]), at: now };
      this.#renewed(now);
    } catch (err) {
      const conflict = err instanceof KubeApiError && err.statusCode === 409;
      if (!conflict) logger.warn({ err: (err as Error).message }, 'leader lease: could not read or write the Lease');
      this.#lost(now);
    }
  }

  #renewed(now: number): void {
    // An attempt that finishes after stop()/abandon() must not make us leader again.
    if (!this.#running) return;
    this.#lastRenew = now;
    if (!this.#leader) {
      this.#options.logger.info({ lease: `${this.#options.namespace}/${this.#options.name}`, identity: this.#options.identity }, 'became the leader');
      this.#setLeader(true);
    }
  }

  /** Not renewed this round: a leader steps down once its renew deadline has passed. */
  #lost(now: number): void {
    if (!this.#leader) return;
    if (now - this.#lastRenew < (this.#options.renewDeadlineMs ?? DEFAULT_RENEW_DEADLINE_MS)) return;
    this.#options.logger.warn({ lease: `${this.#options.namespace}/${this.#options.name}` }, 'lost the leader lease (could not renew before the deadline)');
    this.#setLeader(false);
  }

  #setLeader(leader: boolean): void {
    this.#leader = leader;
    if (leader) this.#options.onStartedLeading?.();
    else this.#options.onStoppedLeading?.();
  }

  #path(name?: string): string {
    return `/apis/coordination.k8s.io/v1/namespaces/${encodeURIComponent(this.#options.namespace)}/leases${name ? `/${encodeURIComponent(name)}` : ''}`;
  }

  async #get(): Promise<Lease | undefined> {
    try {
      return await this.#options.client.request<Lease>('GET', this.#path(this.#options.name));
    } catch (err) {
      if (err instanceof KubeApiError && err.statusCode === 404) return undefined;
      throw err;
    }
  }

  async #create(spec: LeaseSpec): Promise<Lease> {
    const body: Lease = { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: this.#options.name, namespace: this.#options.namespace }, spec };
    return this.#options.client.request<Lease>('POST', this.#path(), { body });
  }

  /** An update conditioned on the resourceVersion read: 409 when someone wrote in between. */
  async #put(lease: Lease): Promise<Lease> {
    return this.#options.client.request<Lease>('PUT', this.#path(this.#options.name), { body: lease });
  }
}

/** Kubernetes MicroTime: RFC 3339 with microseconds. */
function microTime(ms: number): string {
  return new Date(ms).toISOString().replace('Z', '000Z');
}
