/**
 * What the data plane does not apply (yet), in one table: every field of SPEC.md's kinds that is
 * accepted by the schema but ignored by src/proxy — everywhere, or on one kind of backend. The
 * translator consults it where each object's status is written (policy/not-applied-status.ts for
 * ProxyPolicy ancestors, status/unapplied-objects.ts for ProxyBackend, ProxyParameters and
 * ProxyModel), so nothing is `Accepted=True` while part of it is ignored (docs/policies.md, "What
 * is not applied yet"). When a feature lands, its row goes; the table test and the docs table
 * list the same rows.
 */
import type { KubeObject } from '../../../api/gateway/object.ts';
import { isDict } from '../read.ts';

/**
 * The kinds of backend a request can end at; rows limited to some of them apply only there.
 * `mcpTarget` is one target of an MCP backend, reached by a ProxyPolicy whose targetRef names it
 * with `sectionName` (that policy reaches `mcp` as well): its own steps run per call to the target.
 */
export const BACKEND_KINDS = ['Service', 'static', 'ai', 'mcp', 'a2a', 'forwardProxy', 'agentRuntime', 'mcpTarget'] as const;
export type BackendKind = (typeof BACKEND_KINDS)[number];

/** A ProxyBackend object's kind, or undefined for a type the gateway does not serve. */
export function proxyBackendKind(object: KubeObject | undefined): BackendKind | undefined {
  const spec = isDict(object?.spec) ? object.spec : {};
  return spec.ai !== undefined ? 'ai' : spec.mcp !== undefined ? 'mcp' : spec.static !== undefined ? 'static' : spec.a2a !== undefined ? 'a2a'
    : spec.dynamicForwardProxy !== undefined ? 'forwardProxy' : spec.cloudA !== undefined ? 'agentRuntime' : undefined;
}

/**
 * What a row's `path` is relative to: a ProxyPolicy section, a BackendFull wherever one is
 * written (ProxyPolicy `spec.backend`, ProxyBackend `spec.policies`, a provider's or MCP
 * target's `policies`), one LLM provider of an AI backend.
 */
export type Scope = 'frontend' | 'traffic' | 'backend' | 'provider';

export interface NotAppliedRow {
  readonly scope: Scope;
  /** Dotted path under the scope; `[]` stands for every item of a list. */
  readonly path: string;
  /** Absent: ignored on every kind. */
  readonly kinds?: readonly BackendKind[];
  /** Only values for which this holds are ignored (`owner` is the scope object, e.g. the provider). */
  readonly when?: (value: unknown, owner: Readonly<Record<string, unknown>>) => boolean;
  /** The member keeps working in part (e.g. request phases run, response phases do not): never counts as "nothing applied". */
  readonly partial?: boolean;
  /** Why, as the status message says it. */
  readonly why: string;
  /** The issue that builds it; absent when nothing will (a platform limit, or SPEC.md says so). */
  readonly issue?: number;
}

const NOT_AI: readonly BackendKind[] = ['Service', 'static', 'mcp', 'a2a', 'forwardProxy', 'agentRuntime'];
const NOT_MCP: readonly BackendKind[] = ['Service', 'static', 'ai', 'a2a', 'forwardProxy', 'agentRuntime'];
const NODE_KEEPALIVE = "Node's socket API sets only the idle time before keepalive probes, not their count or interval";

/** Every field the data plane ignores. Keep docs/policies.md ("What is not applied yet") in step. */
export const NOT_APPLIED: readonly NotAppliedRow[] = [
  // Frontend (Bind-level: no backend kind).
  { scope: 'frontend', path: 'tcp.keepalive.retries', why: NODE_KEEPALIVE },
  { scope: 'frontend', path: 'tcp.keepalive.interval', why: NODE_KEEPALIVE },

  // Traffic members that mean nothing on some kinds.
  {
    scope: 'traffic', path: 'rateLimit.local[]', kinds: NOT_AI, when: (v) => isDict(v) && v.tokens !== undefined,
    why: 'a `tokens` limit: only AI backends report token usage, so it never triggers here',
  },
  {
    scope: 'traffic', path: 'rateLimit.global.descriptors[]', kinds: NOT_AI, when: (v) => isDict(v) && v.unit === 'Tokens',
    why: 'a `unit: Tokens` descriptor: only AI backends report token usage, so it is never charged here',
  },

  // BackendFull members (ProxyPolicy backend, ProxyBackend policies, provider and MCP target policies).
  { scope: 'backend', path: 'tcp.keepalive.retries', why: NODE_KEEPALIVE },
  { scope: 'backend', path: 'tcp.keepalive.interval', why: NODE_KEEPALIVE },
  // Kept in step with src/proxy/policies/backend/support.ts: what a kind refuses there is answered 500.
  // Kept in step with src/proxy/backends/dynamic-forward/ (handler.ts, connection.ts): the forward
  // proxy applies tcp, tls, tunnel, http.requestTimeout, auth, transformation and extAuth.
  {
    scope: 'backend', path: 'http.version', kinds: ['forwardProxy'], when: (v) => v === 'HTTP2',
    why: '`HTTP2`: a dynamic forward proxy speaks HTTP/1.1 to every destination',
  },
  {
    scope: 'backend', path: 'health', kinds: ['forwardProxy'],
    why: 'a dynamic forward proxy sends each request to the destination its client named: there is no set of endpoints to evict one from',
  },
  // Kept in step with src/proxy/policies/backend/support.ts (cloudB/cloudC refused on agentRuntime)
  // and src/proxy/backends/agent-runtime/handler.ts (one regional endpoint: no passive health).
  {
    scope: 'backend', path: 'auth.cloudB', kinds: ['agentRuntime'],
    why: 'a cloud-A agent runtime takes SigV4 or a bearer token its own inbound authorizer accepts, not a cloud-B token: its requests are answered 500 and nothing is sent',
  },
  {
    scope: 'backend', path: 'auth.cloudC', kinds: ['agentRuntime'],
    why: 'a cloud-A agent runtime takes SigV4 or a bearer token its own inbound authorizer accepts, not a cloud-C token: its requests are answered 500 and nothing is sent',
  },
  { scope: 'backend', path: 'health.unhealthyCondition', kinds: ['agentRuntime'], why: 'an agent runtime is one regional endpoint: there is nothing to evict it in favour of' },
  { scope: 'backend', path: 'health.eviction', kinds: ['agentRuntime'], why: 'an agent runtime is one regional endpoint: there is nothing to evict it in favour of' },
  // Kept in step with src/proxy/mcp/downstream/answer-headers.ts: a target's own response header
  // changes reach an answer that is that target's alone, never a shared one.
  ...(['set', 'add', 'remove'] as const).map((op): NotAppliedRow => ({
    scope: 'backend', path: `transformation.response.${op}`, kinds: ['mcpTarget'], partial: true,
    why: 'applied to the answers of requests routed to this target alone (tools/call, prompts/get, resources/read, completion/complete … over Streamable HTTP); not to answers several targets share (initialize, lists, batches of several requests) nor on the legacy HTTP+SSE transport, whose answers travel on the session\'s stream',
  })),
  { scope: 'backend', path: 'ai', kinds: NOT_AI, why: 'SPEC.md: `ai` applies only to backends of type ai' },
  { scope: 'backend', path: 'mcp', kinds: NOT_MCP, why: 'SPEC.md: `mcp` applies only to backends of type mcp' },

  // One LLM provider of an AI backend (`spec.ai.provider`, `spec.ai.groups[].providers[]`).
];

/** Whole objects and ProxyBackend types the data plane does not serve at all. */
export const NOT_SERVED = {
  ProxyParameters: { why: 'data-plane provisioning is not applied: the embedded gateway runs in this process with its own settings (modelCatalog applies, docs/models.md)', issue: 16 },
  ProxyModel: { why: 'ProxyModel is served only with --enable-proxy-models, through HTTPRoute rules whose only backendRef is the ProxyModel backend "*" (attached to the rule, or to a Gateway or ListenerSet the route attaches to; docs/models.md)', issue: 18 },
} as const satisfies Readonly<Record<string, { why: string; issue: number }>>;

/** The condition reasons: part of what is set applies, or nothing does. */
export const REASON_PARTIALLY_APPLIED = 'PartiallyApplied';
export const REASON_UNSUPPORTED = 'Unsupported';

/** `why (issue N)`, as status messages and the docs say it. */
export function explain(row: { readonly why: string; readonly issue?: number }): string {
  return row.issue === undefined ? row.why : `${row.why} (issue ${row.issue})`;
}

/** One ignored field where it is written. */
export interface Finding {
  /** The full field path, e.g. `spec.traffic.rateLimit.local[0].tokens`. */
  readonly path: string;
  readonly row: NotAppliedRow;
  /** The kinds of backend it is ignored on here (absent: everywhere). */
  readonly kinds?: readonly BackendKind[];
}

/**
 * The ignored fields set in `value` (a `scope` object written at `at`), for a place reaching
 * backends of `kinds` (undefined: rows limited to kinds are skipped, e.g. nothing is reached).
 */
export function findNotApplied(scope: Scope, value: unknown, at: string, kinds: ReadonlySet<BackendKind> | undefined): Finding[] {
  if (!isDict(value)) return [];
  const out: Finding[] = [];
  for (const row of NOT_APPLIED) {
    if (row.scope !== scope) continue;
    const hit = row.kinds === undefined ? undefined : row.kinds.filter((k) => kinds?.has(k));
    if (hit !== undefined && hit.length === 0) continue;
    for (const found of valuesAt(value, row.path, at)) {
      if (row.when && !row.when(found.value, value)) continue;
      out.push({ path: found.path, row, ...(hit ? { kinds: hit } : {}) });
    }
  }
  return out;
}

/**
 * True when every field set in `value` (one member of a `scope` object) is ignored on `kind`:
 * then the member does nothing there. Partial rows never make a member ignored as a whole.
 */
export function whollyIgnored(scope: Scope, member: string, value: unknown, owner: Readonly<Record<string, unknown>>, kind: BackendKind | undefined): boolean {
  const rows = NOT_APPLIED.filter((r) => r.scope === scope && !r.partial && (r.kinds === undefined || (kind !== undefined && r.kinds.includes(kind))));
  const covered = (v: unknown, path: string): boolean => {
    if (rows.some((r) => r.path === path && (!r.when || r.when(v, owner)))) return true;
    if (Array.isArray(v)) return v.length > 0 && v.every((item) => covered(item, `${path}[]`));
    if (isDict(v)) {
      const keys = Object.keys(v).filter((k) => v[k] !== undefined);
      return keys.length > 0 && keys.every((k) => covered(v[k], `${path}.${k}`));
    }
    return false;
  };
  return covered(value, member);
}

/** The values at `path` (with `[]` for every item) and their concrete paths under `at`. */
function valuesAt(root: unknown, path: string, at: string): { value: unknown; path: string }[] {
  let current: { value: unknown; path: string }[] = [{ value: root, path: at }];
  for (const segment of path.split('.')) {
    const list = segment.endsWith('[]');
    const key = list ? segment.slice(0, -2) : segment;
    current = current.flatMap(({ value, path: p }) => {
      if (!isDict(value) || value[key] === undefined) return [];
      const next = { value: value[key], path: `${p}.${key}` };
      if (!list) return [next];
      return Array.isArray(next.value) ? next.value.map((item, i) => ({ value: item, path: `${next.path}[${i}]` })) : [];
    });
  }
  return current;
}

/** One sentence per finding, for a condition message. */
export function describeFindings(findings: readonly Finding[]): string {
  return findings.map((f) => `${f.path}${f.kinds ? ` (on ${f.kinds.join(', ')} backends)` : ''}: ${explain(f.row)}`).join('; ');
}
