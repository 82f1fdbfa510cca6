/**
 * An in-process fake Kubernetes API server for tests: no real kube-apiserver can run here, so
 * Kubernetes mode is tested against this, through the unmodified `@kubernetes/client-node`.
 *
 * It speaks the REST protocol the client uses, over plain node:http (or https with `tls`):
 *
 * - discovery: `/api`, `/apis`, `/api/v1`, `/apis/<group>/<version>` resource lists;
 * - list (`resourceVersion` of the list is the store's current one; built-in kinds' list items
 *   carry no apiVersion/kind, as on the real server) and get;
 * - watch (`?watch=true|1`): a chunked stream of `{"type","object"}` lines, ADDED / MODIFIED /
 *   DELETED replayed from `resourceVersion` and then live; no resourceVersion (or "0") starts with
 *   synthetic ADDED events for every object; `allowWatchBookmarks=true` adds BOOKMARK events every
 *   `bookmarkIntervalMs`; `timeoutSeconds` ends the stream. A resourceVersion older than the kept
 *   history gets what the real server sends: an ERROR event carrying a 410 `Expired` Status, then
 *   the end of the stream, so an informer has to re-list (`compact()` forces that);
 * - create (POST), update (PUT, optimistic concurrency on `metadata.resourceVersion`: 409
 *   Conflict), delete, merge patch (`application/merge-patch+json`; strategic merge is treated
 *   as a merge patch), server-side apply (`application/apply-patch+yaml` with `fieldManager` and
 *   `force`, field ownership as in managed-fields.ts, 409 Conflict naming the other manager, a
 *   `metadata.resourceVersion` in the applied config is a precondition);
 * - the status subresource: `.../status` GET/PUT/PATCH changes only `status`, the main resource
 *   ignores `status` for kinds that have the subresource; `generation` counts spec changes only;
 * - Lease (coordination.k8s.io/v1), namespaces, TokenReview (authentication.k8s.io/v1: create
 *   answers from `tokens`, a table the test fills).
 *
 * - garbage collection: deleting an object deletes, at once and recursively, every object whose
 *   `metadata.ownerReferences` names its uid (the real collector does it in the background,
 *   ignoring `blockOwnerDeletion`, propagation policies and foreground deletion).
 *
 * Not modelled (a test needing them must add them): label/field selectors (a request with one gets
 * 400, never a silently unfiltered answer), paging (`limit`/`continue`), list-by-resourceVersion,
 * finalizers, admission and schema validation, JSON patch.
 *
 * Tests can also act as a cluster user directly (`put`, `remove`, `get`), inject failures
 * (`failNext`), drop every watch connection (`dropWatches`) and read the request log (`requests`).
 */
import { randomUUID } from 'node:crypto';
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { isDeepStrictEqual } from 'node:util';
import { KubeConfig } from '@kubernetes/client-node';
import { apply, fieldsV1, recordUpdate, type Json, type JsonObject, type ManagerEntry } from './fake-apiserver/managed-fields.ts';
import { APPLY_PATCH, asObject, HttpError, isTrue, notFound, now, parseBody, readBody, sendJson, sendStatus } from './fake-apiserver/http.ts';
import { apiVersionOf, DEFAULT_RESOURCE_TYPES, parsePath, type ResourcePath, type ResourceType } from './fake-apiserver/resources.ts';
import { mergePatch, scoped, specOf, unscope, withoutVolatile } from './fake-apiserver/scope.ts';

export type { ResourceType } from './fake-apiserver/resources.ts';

export interface FakeUser {
  readonly username: string;
  readonly uid?: string;
  readonly groups?: readonly string[];
}

export interface FakeApiServerOptions {
  /** Serve https with this certificate (PEM); `kubeConfig()` then trusts it as the CA. */
  readonly tls?: { readonly certPem: string; readonly keyPem: string };
  /** When set, every request must carry `Authorization: Bearer <token>` (else 401). */
  readonly token?: string;
  /** Watch events kept for resuming from a resourceVersion; older ones answer 410 Expired. */
  readonly historyLimit?: number;
  readonly bookmarkIntervalMs?: number;
  readonly types?: readonly ResourceType[];
}

export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  readonly query: Readonly<Record<string, string>>;
  readonly contentType?: string;
  readonly body?: unknown;
}

interface Stored {
  object: JsonObject;
  managers: ManagerEntry[];
}

interface WatchEvent {
  readonly rv: number;
  readonly type: 'ADDED' | 'MODIFIED' | 'DELETED';
  readonly resource: ResourceType;
  readonly object: JsonObject;
}

interface Watcher {
  readonly resource: ResourceType;
  readonly namespace?: string;
  readonly res: ServerResponse;
}

interface Failure {
  readonly method: string;
  readonly pathPattern: RegExp;
  readonly status: number;
  remaining: number;
}


const MERGE_PATCH_TYPES = new Set(['application/merge-patch+json', 'application/strategic-merge-patch+json']);
const DEFAULT_MANAGER = 'unknown';

export class FakeApiServer {
  /** TokenReview answers: a token in this table is authenticated as its user, any other is not. */
  readonly tokens = new Map<string, FakeUser>();
  readonly requests: RecordedRequest[] = [];
  readonly #options: FakeApiServerOptions;
  readonly #types: readonly ResourceType[];
  readonly #store = new Map<ResourceType, Map<string, Stored>>();
  readonly #history: WatchEvent[] = [];
  readonly #watchers = new Set<Watcher>();
  readonly #failures: Failure[] = [];
  readonly #server: Server;
  #rv = 1;
  /** A watch may resume from any resourceVersion ≥ this; older ones get 410 Expired. */
  #oldestResumable = 0;
  #url = '';

  private constructor(options: FakeApiServerOptions) {
    this.#options = options;
    this.#types = options.types ?? DEFAULT_RESOURCE_TYPES;
    for (const t of this.#types) this.#store.set(t, new Map());
    const handler = (req: IncomingMessage, res: ServerResponse): void => { void this.#handle(req, res); };
    this.#server = options.tls ? createHttpsServer({ cert: options.tls.certPem, key: options.tls.keyPem }, handler) : createHttpServer(handler);
  }

  static async start(options: FakeApiServerOptions = {}): Promise<FakeApiServer> {
    const server = new FakeApiServer(options);
    await new Promise<void>((resolve) => server.#server.listen(0, '127.0.0.1', resolve));
    const { port } = server.#server.address() as AddressInfo;
    // Over TLS the name is `localhost`, which the test certificates carry as a DNS name.
    server.#url = options.tls ? `https://localhost:${port}` : `http://127.0.0.1:${port}`;
    return server;
  }

  get url(): string {
    return this.#url;
  }

  /** The store's current resourceVersion. */
  get resourceVersion(): string {
    return String(this.#rv);
  }

  /** A kubeconfig for this server, as `loadFromDefault` would read it from a file. */
  kubeConfigYaml(namespace = 'default'): string {
    const cluster = this.#options.tls
      ? { server: this.#url, 'certificate-authority-data': Buffer.from(this.#options.tls.certPem).toString('base64') }
      // client-node refuses plain http unless TLS verification is explicitly off.
      : { server: this.#url, 'insecure-skip-tls-verify': true };
    const user = this.#options.token ? { token: this.#options.token } : {};
    return JSON.stringify({
      apiVersion: 'v1', kind: 'Config', 'current-context': 'fake',
      clusters: [{ name: 'fake', cluster }],
      users: [{ name: 'fake', user }],
      contexts: [{ name: 'fake', context: { cluster: 'fake', user: 'fake', namespace } }],
    });
  }

  kubeConfig(namespace = 'default'): KubeConfig {
    const kc = new KubeConfig();
    kc.loadFromString(this.kubeConfigYaml(namespace));
    return kc;
  }

  // --- acting as a cluster user, without HTTP ---------------------------------------------------

  /** Creates or replaces (unconditionally) an object as manager `manager`; returns it as stored. */
  put(object: Record<string, unknown>, manager = 'test'): JsonObject {
    const body = structuredClone(object) as JsonObject;
    const t = this.#typeOf(body);
    const meta = body.metadata as JsonObject;
    const path: ResourcePath = { type: t, name: String(meta.name), ...(t.namespaced ? { namespace: String(meta.namespace ?? 'default') } : {}) };
    delete meta.resourceVersion;
    const existing = this.#find(path);
    return existing ? this.#update(path, existing, body, manager, '') : this.#create(path, body, manager);
  }

  /** Writes an object's status as a controller's status subresource write would. */
  putStatus(object: Record<string, unknown>, manager = 'test'): JsonObject {
    const body = structuredClone(object) as JsonObject;
    const t = this.#typeOf(body);
    const meta = body.metadata as JsonObject;
    const path: ResourcePath = { type: t, name: String(meta.name), ...(t.namespaced ? { namespace: String(meta.namespace ?? 'default') } : {}), subresource: 'status' };
    const existing = this.#find(path);
    if (!existing) throw new Error(`no ${t.kind} ${String(meta.name)}`);
    return this.#update(path, existing, body, manager, 'status');
  }

  remove(apiVersion: string, kind: string, name: string, namespace?: string): void {
    const t = this.#typeOf({ apiVersion, kind });
    this.#delete({ type: t, name, ...(t.namespaced ? { namespace: namespace ?? 'default' } : {}) });
  }

  get(apiVersion: string, kind: string, name: string, namespace?: string): JsonObject | undefined {
    const t = this.#typeOf({ apiVersion, kind });
    const stored = this.#find({ type: t, name, ...(t.namespaced ? { namespace: namespace ?? 'default' } : {}) });
    return stored ? this.#render(stored) : undefined;
  }

  list(apiVersion: string, kind: string): JsonObject[] {
    const t = this.#typeOf({ apiVersion, kind });
    return [...this.#store.get(t)!.values()].map((s) => this.#render(s));
  }

  /** Forgets the watch history: every watch resuming from an older resourceVersion gets 410. */
  compact(): void {
    this.#history.length = 0;
    this.#oldestResumable = this.#rv;
  }

  /** Ends every open watch stream, as a restarting API server or a broken connection would. */
  dropWatches(): void {
    for (const watcher of this.#watchers) watcher.res.end();
    this.#watchers.clear();
  }

  watchCount(): number {
    return this.#watchers.size;
  }

  /** The next `times` requests of `method` whose path matches fail with `status`. */
  failNext(method: string, pathPattern: RegExp, status: number, times = 1): void {
    this.#failures.push({ method, pathPattern, status, remaining: times });
  }

  clearFailures(): void {
    this.#failures.length = 0;
  }

  async close(): Promise<void> {
    this.dropWatches();
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  // --- HTTP ---------------------------------------------------------------------------------------

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://fake');
    const method = req.method ?? 'GET';
    const contentType = req.headers['content-type']?.split(';')[0]?.trim();
    try {
      const raw = await readBody(req);
      const body = raw.length > 0 ? parseBody(raw, contentType) : undefined;
      this.requests.push({ method, path: url.pathname, query: Object.fromEntries(url.searchParams), ...(contentType ? { contentType } : {}), ...(body !== undefined ? { body } : {}) });
      if (this.#options.token && req.headers.authorization !== `Bearer ${this.#options.token}`) throw new HttpError(401, 'Unauthorized', 'Unauthorized');
      const failure = this.#failures.find((f) => f.method === method && f.pathPattern.test(url.pathname) && f.remaining > 0);
      if (failure) {
        failure.remaining--;
        throw new HttpError(failure.status, 'InternalError', `injected failure ${failure.status}`);
      }
      this.#route(method, url, contentType, body, res);
    } catch (err) {
      if (err instanceof HttpError) sendStatus(res, err);
      else sendStatus(res, new HttpError(500, 'InternalError', (err as Error).message));
    }
  }

  #route(method: string, url: URL, contentType: string | undefined, body: unknown, res: ServerResponse): void {
    const parsed = parsePath(url.pathname, this.#types);
    if (parsed.kind === 'discovery-root') return sendJson(res, 200, parsed.core ? { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [] } : this.#groupList());
    if (parsed.kind === 'discovery-group-version') return this.#resourceList(res, parsed.group, parsed.version);
    if (parsed.kind === 'unknown') throw new HttpError(404, 'NotFound', `the server could not find the requested resource (${url.pathname})`);
    const path = parsed.path;
    for (const selector of ['labelSelector', 'fieldSelector']) {
      if (url.searchParams.get(selector)) throw new HttpError(400, 'BadRequest', `the fake API server does not implement ${selector}`);
    }
    if (path.subresource !== undefined && (path.subresource !== 'status' || !path.type.status)) throw new HttpError(404, 'NotFound', `no subresource ${path.subresource} on ${path.type.plural}`);
    const sub = path.subresource ?? '';
    const manager = url.searchParams.get('fieldManager') ?? undefined;
    if (path.name === undefined) {
      if (method === 'GET') return isTrue(url.searchParams.get('watch')) ? this.#watch(path, url, res) : sendJson(res, 200, this.#listResponse(path));
      if (method === 'POST') return sendJson(res, 201, this.#post(path, asObject(body)));
      throw new HttpError(405, 'MethodNotAllowed', `${method} is not allowed on a collection`);
    }
    const existing = this.#find(path);
    switch (method) {
      case 'GET':
        if (!existing) throw notFound(path);
        return sendJson(res, 200, this.#render(existing));
      case 'PUT': {
        if (!existing) throw notFound(path);
        const object = asObject(body);
        const expected = (object.metadata as JsonObject | undefined)?.resourceVersion;
        if (expected !== undefined && expected !== (existing.object.metadata as JsonObject).resourceVersion) {
          throw new HttpError(409, 'Conflict', `Operation cannot be fulfilled on ${path.type.plural} "${path.name}": the object has been modified; please apply your changes to the latest version and try again`);
        }
        return sendJson(res, 200, this.#update(path, existing, object, manager ?? DEFAULT_MANAGER, sub));
      }
      case 'PATCH':
        if (contentType === APPLY_PATCH) return sendJson(res, existing ? 200 : 201, this.#serverSideApply(path, existing, asObject(body), url));
        if (contentType !== undefined && MERGE_PATCH_TYPES.has(contentType)) {
          if (!existing) throw notFound(path);
          return sendJson(res, 200, this.#update(path, existing, mergePatch(existing.object, asObject(body)) as JsonObject, manager ?? DEFAULT_MANAGER, sub));
        }
        throw new HttpError(415, 'UnsupportedMediaType', `the fake API server does not implement patch type ${contentType ?? '(none)'}`);
      case 'DELETE':
        if (!existing) throw notFound(path);
        return sendJson(res, 200, this.#delete(path));
      default:
        throw new HttpError(405, 'MethodNotAllowed', `${method} is not allowed`);
    }
  }

  #groupList(): JsonObject {
    const groups = new Map<string, string[]>();
    for (const t of this.#types) if (t.group !== '') groups.set(t.group, [...new Set([...(groups.get(t.group) ?? []), t.version])]);
    return {
      kind: 'APIGroupList', apiVersion: 'v1',
      groups: [...groups].map(([name, versions]) => ({
        name,
        versions: versions.map((version) => ({ groupVersion: `${name}/${version}`, version })),
        preferredVersion: { groupVersion: `${name}/${versions[0]!}`, version: versions[0]! },
      })),
    };
  }

  #resourceList(res: ServerResponse, group: string, version: string): void {
    const types = this.#types.filter((t) => t.group === group && t.version === version);
    if (types.length === 0) throw new HttpError(404, 'NotFound', `the server could not find the requested resource (${group}/${version})`);
    const resources = types.flatMap((t) => {
      const verbs = t.kind === 'TokenReview' ? ['create'] : ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'];
      const main = { name: t.plural, singularName: t.kind.toLowerCase(), namespaced: t.namespaced, kind: t.kind, verbs };
      return t.status ? [main, { name: `${t.plural}/status`, singularName: '', namespaced: t.namespaced, kind: t.kind, verbs: ['get', 'patch', 'update'] }] : [main];
    });
    sendJson(res, 200, { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: group === '' ? version : `${group}/${version}`, resources });
  }

  #listResponse(path: ResourcePath): JsonObject {
    const items = this.#inScope(path).map((s) => {
      const rendered = this.#render(s);
      if (!path.type.custom) {
        delete rendered.apiVersion;
        delete rendered.kind;
      }
      return rendered;
    });
    return { kind: `${path.type.kind}List`, apiVersion: apiVersionOf(path.type), metadata: { resourceVersion: String(this.#rv) }, items };
  }

  #watch(path: ResourcePath, url: URL, res: ServerResponse): void {
    res.writeHead(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
    // The client's fetch resolves on the response head: send it now, not with the first event.
    res.flushHeaders();
    const send = (type: string, object: Json): boolean => res.write(`${JSON.stringify({ type, object })}\n`);
    const from = url.searchParams.get('resourceVersion') ?? '';
    if (from === '' || from === '0') {
      for (const stored of this.#inScope(path)) send('ADDED', this.#render(stored));
    } else {
      const since = Number(from);
      if (!Number.isInteger(since) || since < this.#oldestResumable) {
        send('ERROR', { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: `too old resource version: ${from} (${this.#oldestResumable})`, reason: 'Expired', code: 410 });
        res.end();
        return;
      }
      for (const event of this.#history) {
        if (event.rv > since && this.#matches(event, path)) send(event.type, event.object);
      }
    }
    const watcher: Watcher = { resource: path.type, ...(path.namespace !== undefined ? { namespace: path.namespace } : {}), res };
    this.#watchers.add(watcher);
    const timers: NodeJS.Timeout[] = [];
    if (isTrue(url.searchParams.get('allowWatchBookmarks'))) {
      timers.push(setInterval(() => send('BOOKMARK', { kind: path.type.kind, apiVersion: apiVersionOf(path.type), metadata: { resourceVersion: String(this.#rv) } }), this.#options.bookmarkIntervalMs ?? 60_000));
    }
    const timeoutSeconds = Number(url.searchParams.get('timeoutSeconds') ?? 0);
    if (timeoutSeconds > 0) timers.push(setTimeout(() => res.end(), timeoutSeconds * 1000));
    res.on('close', () => {
      for (const timer of timers) clearTimeout(timer);
      this.#watchers.delete(watcher);
    });
  }

  #post(path: ResourcePath, body: JsonObject): JsonObject {
    if (path.type.kind === 'TokenReview') return this.#tokenReview(body);
    const meta = (body.metadata ?? {}) as JsonObject;
    if (typeof meta.name !== 'string' || meta.name === '') throw new HttpError(422, 'Invalid', 'metadata.name: Required value');
    const target: ResourcePath = { ...path, name: meta.name };
    if (this.#find(target)) throw new HttpError(409, 'AlreadyExists', `${path.type.plural} "${meta.name}" already exists`);
    return this.#create(target, body, DEFAULT_MANAGER);
  }

  #tokenReview(body: JsonObject): JsonObject {
    const spec = (body.spec ?? {}) as JsonObject;
    const user = typeof spec.token === 'string' ? this.tokens.get(spec.token) : undefined;
    const status: JsonObject = user
      ? { authenticated: true, user: { username: user.username, ...(user.uid ? { uid: user.uid } : {}), groups: [...(user.groups ?? [])] }, audiences: (spec.audiences ?? []) as Json }
      : { authenticated: false, error: 'token not recognised' };
    return { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', metadata: { creationTimestamp: null }, spec, status };
  }

  #serverSideApply(path: ResourcePath, existing: Stored | undefined, body: JsonObject, url: URL): JsonObject {
    const manager = url.searchParams.get('fieldManager');
    if (!manager) throw new HttpError(400, 'BadRequest', 'PATCH requests require fieldManager for apply');
    const meta = (body.metadata ?? {}) as JsonObject;
    if (body.apiVersion !== apiVersionOf(path.type) || body.kind !== path.type.kind) throw new HttpError(400, 'BadRequest', `apply config must be ${apiVersionOf(path.type)} ${path.type.kind}`);
    if (meta.name !== path.name) throw new HttpError(400, 'BadRequest', 'the name of the applied object does not match the name in the URL');
    const sub = path.subresource ?? '';
    if (!existing && sub === 'status') throw notFound(path);
    // A resourceVersion in the applied config is a precondition, as on the real server.
    if (existing && meta.resourceVersion !== undefined && meta.resourceVersion !== (existing.object.metadata as JsonObject).resourceVersion) {
      throw new HttpError(409, 'Conflict', `Operation cannot be fulfilled on ${path.type.plural} "${path.name!}": the object has been modified; please apply your changes to the latest version and try again`);
    }
    const skeleton: JsonObject = { apiVersion: apiVersionOf(path.type), kind: path.type.kind, metadata: { name: path.name!, ...(path.namespace !== undefined ? { namespace: path.namespace } : {}) } };
    const current = existing ?? { object: skeleton, managers: [] };
    let self = current.managers.find((m) => m.manager === manager && m.operation === 'Apply' && m.subresource === sub);
    const isNew = self === undefined;
    self ??= { manager, operation: 'Apply', subresource: sub, apiVersion: apiVersionOf(path.type), time: now(), fields: new Set() };
    const entries = isNew ? [...current.managers, self] : current.managers;
    const outcome = apply(scoped(current.object, path.type, sub), scoped(body, path.type, sub), self, entries, isTrue(url.searchParams.get('force')));
    if (!outcome.object) {
      const causes = outcome.conflicts.map((c) => ({ type: 'FieldManagerConflict', message: `conflict with "${c.manager}"`, field: c.field }));
      throw new HttpError(409, 'Conflict', `Apply failed with ${causes.length} conflict(s): ${causes.map((c) => `${c.message}: ${c.field}`).join(', ')}`, { name: path.name!, kind: path.type.plural, causes });
    }
    self.time = now();
    const next = unscope(current.object, outcome.object, path.type, sub);
    if (!existing) return this.#create(path, next, manager, [self]);
    existing.managers = entries.filter((m) => m.fields.size > 0);
    return this.#commit(path, existing, next);
  }

  // --- the store ------------------------------------------------------------------------------------

  #typeOf(object: { apiVersion?: unknown; kind?: unknown }): ResourceType {
    const t = this.#types.find((x) => apiVersionOf(x) === object.apiVersion && x.kind === object.kind);
    if (!t) throw new Error(`the fake API server does not serve ${String(object.apiVersion)} ${String(object.kind)}`);
    return t;
  }

  #find(path: ResourcePath): Stored | undefined {
    return this.#store.get(path.type)!.get(`${path.namespace ?? ''}/${path.name!}`);
  }

  #inScope(path: ResourcePath): Stored[] {
    const all = [...this.#store.get(path.type)!.values()];
    return path.namespace === undefined ? all : all.filter((s) => (s.object.metadata as JsonObject).namespace === path.namespace);
  }

  #matches(event: WatchEvent, path: ResourcePath): boolean {
    return event.resource === path.type && (path.namespace === undefined || (event.object.metadata as JsonObject).namespace === path.namespace);
  }

  #create(path: ResourcePath, body: JsonObject, manager: string, managers?: ManagerEntry[]): JsonObject {
    const object = structuredClone(body);
    const meta = { ...((object.metadata ?? {}) as JsonObject) };
    delete meta.managedFields;
    object.apiVersion = apiVersionOf(path.type);
    object.kind = path.type.kind;
    if (path.type.status) delete object.status;
    object.metadata = { ...meta, name: path.name!, ...(path.namespace !== undefined ? { namespace: path.namespace } : {}), uid: randomUUID(), generation: 1, creationTimestamp: now() };
    const stored: Stored = { object: {}, managers: managers ?? [] };
    if (!managers) {
      const entry: ManagerEntry = { manager, operation: 'Update', subresource: '', apiVersion: apiVersionOf(path.type), time: now(), fields: new Set() };
      recordUpdate({}, scoped(object, path.type, ''), entry, [entry]);
      if (entry.fields.size > 0) stored.managers.push(entry);
    }
    this.#store.get(path.type)!.set(`${path.namespace ?? ''}/${path.name!}`, stored);
    return this.#commit(path, stored, object, 'ADDED');
  }

  #update(path: ResourcePath, existing: Stored, body: JsonObject, manager: string, sub: string): JsonObject {
    const before = scoped(existing.object, path.type, sub);
    const after = scoped(body, path.type, sub);
    let entry = existing.managers.find((m) => m.manager === manager && m.operation === 'Update' && m.subresource === sub);
    if (!entry) {
      entry = { manager, operation: 'Update', subresource: sub, apiVersion: apiVersionOf(path.type), time: now(), fields: new Set() };
      existing.managers.push(entry);
    }
    recordUpdate(before, after, entry, existing.managers);
    entry.time = now();
    existing.managers = existing.managers.filter((m) => m.fields.size > 0);
    return this.#commit(path, existing, unscope(existing.object, after, path.type, sub));
  }

  /** Stores `next` with a new resourceVersion (and generation when the spec changed) and tells the watchers. */
  #commit(path: ResourcePath, stored: Stored, next: JsonObject, type: 'ADDED' | 'MODIFIED' = 'MODIFIED'): JsonObject {
    const previous = stored.object;
    if (type === 'MODIFIED' && isDeepStrictEqual(withoutVolatile(previous), withoutVolatile(next))) return this.#render(stored);
    const meta = next.metadata as JsonObject;
    if (type === 'MODIFIED' && !isDeepStrictEqual(specOf(previous), specOf(next))) meta.generation = Number((previous.metadata as JsonObject).generation ?? 1) + 1;
    meta.resourceVersion = String(++this.#rv);
    stored.object = next;
    this.#emit(type, path.type, this.#render(stored));
    return this.#render(stored);
  }

  #delete(path: ResourcePath): JsonObject {
    const stored = this.#find(path);
    if (!stored) throw notFound(path);
    this.#store.get(path.type)!.delete(`${path.namespace ?? ''}/${path.name!}`);
    (stored.object.metadata as JsonObject).resourceVersion = String(++this.#rv);
    const rendered = this.#render(stored);
    this.#emit('DELETED', path.type, rendered);
    this.#collectGarbage(String((stored.object.metadata as JsonObject).uid));
    return rendered;
  }

  /** Deletes the dependents of a deleted owner (the garbage collector's cascading deletion). */
  #collectGarbage(ownerUid: string): void {
    for (const [type, objects] of this.#store) {
      for (const dependent of [...objects.values()]) {
        const meta = dependent.object.metadata as JsonObject;
        const owners = Array.isArray(meta.ownerReferences) ? meta.ownerReferences as JsonObject[] : [];
        if (!owners.some((o) => o.uid === ownerUid)) continue;
        const namespace = typeof meta.namespace === 'string' ? meta.namespace : undefined;
        const path: ResourcePath = { type, name: String(meta.name), ...(type.namespaced ? { namespace: namespace ?? 'default' } : {}) };
        // A dependent of two deleted owners may already be gone.
        if (this.#find(path)) this.#delete(path);
      }
    }
  }

  #emit(type: WatchEvent['type'], resource: ResourceType, object: JsonObject): void {
    const event: WatchEvent = { rv: this.#rv, type, resource, object };
    this.#history.push(event);
    const limit = this.#options.historyLimit ?? 1000;
    while (this.#history.length > limit) this.#oldestResumable = this.#history.shift()!.rv;
    const line = `${JSON.stringify({ type, object })}\n`;
    for (const watcher of this.#watchers) {
      if (watcher.resource === resource && (watcher.namespace === undefined || (object.metadata as JsonObject).namespace === watcher.namespace)) watcher.res.write(line);
    }
  }

  #render(stored: Stored): JsonObject {
    const object = structuredClone(stored.object);
    if (stored.managers.length > 0) {
      (object.metadata as JsonObject).managedFields = stored.managers.map((m) => ({
        manager: m.manager, operation: m.operation, apiVersion: m.apiVersion, time: m.time, fieldsType: 'FieldsV1', fieldsV1: fieldsV1(m.fields),
        ...(m.subresource ? { subresource: m.subresource } : {}),
      }));
    }
    return object;
  }
}
