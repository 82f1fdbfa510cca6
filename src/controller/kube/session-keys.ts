/**
 * The per-Gateway MCP session-key Secrets (issue 15; docs/kubernetes.md "Session keys"). MCP
 * session ids are sealed with a key (src/proxy/mcp/session-codec.ts); for any proxy replica of a
 * Gateway to open a session another replica issued, they must share it. The leader makes sure
 * every Gateway of our class has a Secret `<gateway>-session-key` in its namespace:
 *
 *   type Opaque, data.key = 64 hex characters (32 random bytes), label
 *   app.kubernetes.io/managed-by: switchboard, owner reference to the Gateway (so it is
 *   garbage-collected with it).
 *
 * It only ever creates: an existing Secret is never replaced, so a key is never rotated
 * silently (rotation is deleting the Secret; see the docs). The translator reads the Secret like
 * any other (it is watched) into the Gateway's listeners (src/controller/translate/session-key.ts),
 * which carry it to that Gateway's proxies only. SESSION_KEY in a proxy's environment wins.
 */
import { randomBytes } from 'node:crypto';
import type { KubeObject, SourcedObject } from '../../api/gateway/object.ts';
import type { Logger } from '../../common/logger.ts';
import type { ObjectSource, SourceSnapshot } from '../sources/types.ts';
import { isSessionKey, SESSION_KEY_ENTRY, sessionKeySecretName } from '../translate/session-key.ts';
import { KubeApiError, type KubeClient } from './client.ts';
import { deltaTouches } from './kube-source.ts';

/** The kinds reconcile() reads (#index): our GatewayClasses, their Gateways, the Secrets. */
const SESSION_KEY_INPUTS: ReadonlySet<string> = new Set(['GatewayClass', 'Gateway', 'Secret']);

const GATEWAY_API_VERSION = 'gateway.networking.k8s.io/v1';
const GATEWAY_GROUP = 'gateway.networking.k8s.io';
export const MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by';
/** After a failed create, the next attempt for that Gateway waits this long (a snapshot may come sooner). */
const DEFAULT_RETRY_MS = 10_000;

export interface SessionKeySecretsOptions {
  readonly client: KubeClient;
  readonly logger: Logger;
  readonly controllerName: string;
  /** Only the Lease holder creates Secrets. */
  readonly isLeader: () => boolean;
  readonly retryMs?: number;
  /** Seam for tests. */
  readonly randomKey?: () => string;
}

interface GatewayRef {
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
}

export class SessionKeySecrets {
  readonly #options: SessionKeySecretsOptions;
  #objects: readonly SourcedObject[] = [];
  /**
   * `<namespace>/<secret>` being created ('pending'), or created at (ms) and not yet seen in a
   * snapshot: not created again until `retryMs` later (it may be deleted before the watch shows it).
   */
  readonly #creating = new Map<string, 'pending' | number>();
  /** `<namespace>/<secret>` → when it may be tried again after a failure. */
  readonly #failedUntil = new Map<string, number>();
  /** `<namespace>/<secret>@<resourceVersion>` of invalid Secrets already warned about. */
  readonly #warned = new Set<string>();
  #retry: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(options: SessionKeySecretsOptions) {
    this.#options = options;
  }

  /** The source with this reconciler fed each snapshot it delivers (before the translator sees it). */
  tap(source: ObjectSource): ObjectSource {
    return {
      start: (onSnapshot) => source.start((snapshot: SourceSnapshot) => {
        // A change to none of the kinds read here (a route edit) needs no pass over every object.
        if (deltaTouches(snapshot, SESSION_KEY_INPUTS)) this.observe(snapshot.objects);
        else this.#objects = snapshot.objects;
        onSnapshot(snapshot);
      }),
      stop: async () => {
        this.close();
        await source.stop();
      },
    };
  }

  /** Called with every snapshot: creates the missing Secrets when this replica leads. */
  observe(objects: readonly SourcedObject[]): void {
    this.#objects = objects;
    this.reconcile();
  }

  /** Creates what is missing from the last snapshot (also on becoming the leader). */
  reconcile(): void {
    if (this.#closed || !this.#options.isLeader()) return;
    const { gateways, secrets } = this.#index(this.#objects);
    const now = Date.now();
    for (const gateway of gateways) {
      const name = sessionKeySecretName(gateway.name);
      const id = `${gateway.namespace}/${name}`;
      const existing = secrets.get(id);
      if (existing) {
        this.#creating.delete(id);
        this.#failedUntil.delete(id);
        this.#checkExisting(id, existing);
        continue;
      }
      const creating = this.#creating.get(id);
      if (creating === 'pending' || (creating !== undefined && creating + this.#retryMs > now) || (this.#failedUntil.get(id) ?? 0) > now) continue;
      this.#creating.set(id, 'pending');
      void this.#create(gateway, name, id);
    }
  }

  close(): void {
    this.#closed = true;
    clearTimeout(this.#retry);
  }

  #index(objects: readonly SourcedObject[]): { gateways: GatewayRef[]; secrets: Map<string, KubeObject> } {
    const ourClasses = new Set<string>();
    for (const { object } of objects) {
      if (object.kind === 'GatewayClass' && object.apiVersion.startsWith(`${GATEWAY_GROUP}/`) && (object.spec as { controllerName?: unknown } | undefined)?.controllerName === this.#options.controllerName) {
        ourClasses.add(object.metadata.name);
      }
    }
    const gateways: GatewayRef[] = [];
    const secrets = new Map<string, KubeObject>();
    for (const { object } of objects) {
      const namespace = object.metadata.namespace ?? 'default';
      if (object.kind === 'Secret' && object.apiVersion === 'v1') secrets.set(`${namespace}/${object.metadata.name}`, object);
      if (object.kind !== 'Gateway' || !object.apiVersion.startsWith(`${GATEWAY_GROUP}/`)) continue;
      const className = (object.spec as { gatewayClassName?: unknown } | undefined)?.gatewayClassName;
      const uid = object.metadata.uid;
      // Every object an API server serves has a uid; the owner reference needs it.
      if (typeof className === 'string' && ourClasses.has(className) && typeof uid === 'string' && uid !== '') gateways.push({ namespace, name: object.metadata.name, uid });
    }
    return { gateways, secrets };
  }

  /** An existing Secret with no usable key is left alone (never replaced silently); it is said once per version. */
  #checkExisting(id: string, secret: KubeObject): void {
    const encoded = secret.data?.[SESSION_KEY_ENTRY];
    const value = secret.stringData?.[SESSION_KEY_ENTRY] ?? (encoded === undefined ? undefined : Buffer.from(encoded, 'base64').toString('utf8'));
    if (isSessionKey(value?.trim())) return;
    const version = `${id}@${secret.metadata.resourceVersion ?? ''}`;
    if (this.#warned.has(version)) return;
    this.#warned.add(version);
    this.#options.logger.warn({ secret: id }, `session key Secret has no valid "${SESSION_KEY_ENTRY}" entry (64 hex characters): the Gateway's proxies use SESSION_KEY or a per-process key until it is fixed or deleted (the controller then creates a new one)`);
  }

  async #create(gateway: GatewayRef, name: string, id: string): Promise<void> {
    const key = this.#options.randomKey?.() ?? randomBytes(32).toString('hex');
    const body = {
      apiVersion: 'v1',
      kind: 'Secret',
      type: 'Opaque',
      metadata: {
        name,
        namespace: gateway.namespace,
        labels: { [MANAGED_BY_LABEL]: 'switchboard' },
        ownerReferences: [{ apiVersion: GATEWAY_API_VERSION, kind: 'Gateway', name: gateway.name, uid: gateway.uid }],
      },
      data: { [SESSION_KEY_ENTRY]: Buffer.from(key).toString('base64') },
    };
    try {
      await this.#options.client.request('POST', `/api/v1/namespaces/${encodeURIComponent(gateway.namespace)}/secrets`, { body });
      this.#options.logger.info({ secret: id, gateway: `${gateway.namespace}/${gateway.name}` }, 'created the Gateway\'s MCP session key Secret');
      this.#creating.set(id, Date.now());
    } catch (err) {
      // Someone (another leader, a user) created it first: theirs stands, it arrives by the watch.
      if (err instanceof KubeApiError && err.statusCode === 409) {
        this.#creating.set(id, Date.now());
      } else {
        this.#creating.delete(id);
        this.#failedUntil.set(id, Date.now() + this.#retryMs);
        this.#options.logger.warn({ secret: id, err: (err as Error).message }, 'could not create the Gateway\'s MCP session key Secret; retrying');
      }
    }
    // Looked at again later: a failure is retried, a Secret deleted before the watch showed it is made again.
    this.#recheck();
  }

  get #retryMs(): number {
    return this.#options.retryMs ?? DEFAULT_RETRY_MS;
  }

  #recheck(): void {
    if (this.#closed || this.#retry !== undefined) return;
    this.#retry = setTimeout(() => {
      this.#retry = undefined;
      this.reconcile();
    }, this.#retryMs + 1);
    this.#retry.unref();
  }
}
