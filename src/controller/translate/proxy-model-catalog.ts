/**
 * The model catalog (SPEC.md ProxyParameters `modelCatalog`; docs/models.md "The model
 * catalog"): ConfigMaps named by a Gateway's own ProxyParameters (`spec.infrastructure.
 * parametersRef`; the GatewayClass's parameters are ignored, SPEC.md), each in the Gateway's
 * namespace, whose `data[key]` (default `catalog.json`) lists models with metadata. A models
 * rule's `/v1/models` lists every catalog entry a client could request through it (its id
 * matches a Public model of the rule), merged with the rule's exact Public models.
 *
 * The format: JSON, either an array of entries or an object whose `data` (a vendor's own
 * `/v1/models` answer, OpenAI's or Anthropic's, pasted as is) or `models` is that array. An entry
 * has `id` (required, 1..1024 characters) and optionally `owned_by`, `created` (Unix seconds) or
 * `created_at` (RFC 3339), `display_name`; other fields are ignored. Entries of several sources
 * merge by id, a later source's fields over an earlier one's.
 *
 * Bounds (attacker-fed only through whoever may write the ConfigMap; docs/security.md): a source
 * over 1 MiB is not read; at most 4096 entries per models rule, the rest dropped; each is reported
 * on the ProxyParameters' status.
 */
import type { KubeObject } from '../../api/gateway/object.ts';
import { GATEWAY_GROUP, SWITCHBOARD_GROUP } from '../../api/gateway/index.ts';
import type { ModelCatalogEntryIR } from '../../ir/ai.ts';
import { isDict, listOf, type Dict } from './read.ts';
import { namespaceOf, type Snapshot } from './snapshot.ts';

export const CATALOG_KEY = 'catalog.json';
export const MAX_CATALOG_BYTES = 1 << 20;
export const MAX_CATALOG_ENTRIES = 4096;
const MAX_ID_CHARS = 1024;

export interface CatalogRead {
  readonly entries: readonly ModelCatalogEntryIR[];
  /** What could not be read, each naming its source. */
  readonly problems: readonly string[];
  /** `<ConfigMap name>` or `<name> key <key>` for sources that do not exist. */
  readonly missing: readonly string[];
}

const EMPTY: CatalogRead = { entries: [], problems: [], missing: [] };

/** One source's text → its entries, or why not. */
export function parseCatalog(text: string, where: string): { entries: ModelCatalogEntryIR[]; problems: string[] } {
  if (Buffer.byteLength(text, 'utf8') > MAX_CATALOG_BYTES) return { entries: [], problems: [`${where}: over ${MAX_CATALOG_BYTES} bytes, not read`] };
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    return { entries: [], problems: [`${where}: not JSON (${(err as Error).message})`] };
  }
  const list = Array.isArray(parsed) ? parsed : isDict(parsed) && Array.isArray(parsed.data) ? parsed.data : isDict(parsed) && Array.isArray(parsed.models) ? parsed.models : undefined;
  if (!list) return { entries: [], problems: [`${where}: expected a JSON array of models, or an object with a "data" or "models" array`] };
  const entries: ModelCatalogEntryIR[] = [];
  const problems: string[] = [];
  list.forEach((item: unknown, i) => {
    if (!isDict(item) || typeof item.id !== 'string' || item.id.length === 0 || item.id.length > MAX_ID_CHARS) {
      problems.push(`${where}[${i}]: an entry needs an "id" of 1..${MAX_ID_CHARS} characters`);
      return;
    }
    const created = typeof item.created === 'number' && Number.isInteger(item.created) && item.created >= 0 ? item.created
      : typeof item.created_at === 'string' && Number.isFinite(Date.parse(item.created_at)) ? Math.floor(Date.parse(item.created_at) / 1000) : undefined;
    entries.push({
      id: item.id,
      ...(typeof item.owned_by === 'string' ? { ownedBy: item.owned_by } : {}),
      ...(created !== undefined ? { created } : {}),
      ...(typeof item.display_name === 'string' ? { displayName: item.display_name } : {}),
    });
  });
  return { entries, problems };
}

/** The catalog a ProxyParameters spec names, its ConfigMaps read in `namespace`. */
export function parametersCatalog(snapshot: Snapshot, namespace: string, spec: Dict): CatalogRead {
  const sources = listOf<Dict>(isDict(spec.modelCatalog) ? spec.modelCatalog.sources : undefined);
  if (sources.length === 0) return EMPTY;
  const entries: ModelCatalogEntryIR[] = [];
  const problems: string[] = [];
  const missing: string[] = [];
  for (const source of sources) {
    const ref = isDict(source.configMap) ? source.configMap : {};
    const name = typeof ref.name === 'string' ? ref.name : '';
    const key = typeof ref.key === 'string' ? ref.key : CATALOG_KEY;
    const configMap = snapshot.configMaps.get(`${namespace}/${name}`);
    const text = configMap && isDict(configMap.data) ? configMap.data[key] : undefined;
    if (!configMap) missing.push(name);
    else if (typeof text !== 'string') missing.push(`${name} key ${key}`);
    else {
      const read = parseCatalog(text, `ConfigMap ${namespace}/${name} key ${key}`);
      entries.push(...read.entries);
      problems.push(...read.problems);
    }
  }
  return { entries, problems, missing };
}

/** The catalog of a Gateway: its own (`infrastructure.parametersRef`) ProxyParameters' sources. */
export function gatewayCatalog(snapshot: Snapshot, gateway: KubeObject): CatalogRead {
  const spec = isDict(gateway.spec) ? gateway.spec : {};
  const ref = isDict(spec.infrastructure) && isDict(spec.infrastructure.parametersRef) ? spec.infrastructure.parametersRef : undefined;
  if (!ref || ref.group !== SWITCHBOARD_GROUP || ref.kind !== 'ProxyParameters' || typeof ref.name !== 'string') return EMPTY;
  const namespace = namespaceOf(gateway);
  const parameters = snapshot.proxyParameters.get(`${namespace}/${ref.name}`);
  return parameters && isDict(parameters.spec) ? parametersCatalog(snapshot, namespace, parameters.spec) : EMPTY;
}

/**
 * The catalog of a models rule: its route's Gateways' catalogs (a ListenerSet parent stands for
 * its Gateway), each Gateway once, in the route's parentRef order, merged by id (later fields
 * win), at most MAX_CATALOG_ENTRIES.
 */
export function routeCatalog(snapshot: Snapshot, route: KubeObject | undefined): ModelCatalogEntryIR[] {
  if (!route || !isDict(route.spec) || snapshot.proxyParameters.size === 0) return [];
  const seen = new Set<KubeObject>();
  const merged = new Map<string, ModelCatalogEntryIR>();
  for (const gateway of routeGateways(snapshot, route)) {
    if (seen.has(gateway)) continue;
    seen.add(gateway);
    for (const entry of gatewayCatalog(snapshot, gateway).entries) {
      const known = merged.get(entry.id);
      if (!known && merged.size >= MAX_CATALOG_ENTRIES) continue;
      merged.set(entry.id, known ? { ...known, ...entry } : entry);
    }
  }
  return [...merged.values()];
}

function routeGateways(snapshot: Snapshot, route: KubeObject): KubeObject[] {
  const routeNamespace = namespaceOf(route);
  const gatewayNamed = (namespace: string, name: unknown) => snapshot.gateways.find((g) => g.metadata.name === name && namespaceOf(g) === namespace);
  return listOf<Dict>(isDict(route.spec) ? route.spec.parentRefs : undefined).flatMap((ref) => {
    const group = typeof ref.group === 'string' ? ref.group : GATEWAY_GROUP;
    const kind = typeof ref.kind === 'string' ? ref.kind : 'Gateway';
    const namespace = typeof ref.namespace === 'string' && ref.namespace ? ref.namespace : routeNamespace;
    if (group === GATEWAY_GROUP && kind === 'Gateway') return gatewayNamed(namespace, ref.name) ?? [];
    if (kind !== 'ListenerSet' && kind !== 'XListenerSet') return [];
    const set = snapshot.listenerSets.find((l) => l.kind === kind && l.metadata.name === ref.name && namespaceOf(l) === namespace);
    const parent = set && isDict(set.spec) && isDict(set.spec.parentRef) ? set.spec.parentRef : undefined;
    return parent ? gatewayNamed(typeof parent.namespace === 'string' && parent.namespace ? parent.namespace : namespace, parent.name) ?? [] : [];
  });
}
