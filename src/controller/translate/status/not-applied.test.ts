import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Condition, KubeObject, ObjectStatus } from '../../../api/gateway/object.ts';
import { translate } from '../index.ts';
import { BACKEND_KINDS, explain, findNotApplied, NOT_APPLIED, type BackendKind, type NotAppliedRow } from './not-applied.ts';

const GW = 'gateway.networking.k8s.io/v1';
const SB = 'switchboard.dev/v1alpha1';
type Spec = Record<string, unknown>;

/** A backend of each kind behind route `r` on Gateway `gw`; `target`: what a policy for that kind targets (default: route `r`). */
const BACKENDS: Readonly<Record<BackendKind, { objects: KubeObject[]; ref: Spec; target?: Spec }>> = {
  Service: {
    objects: [{ apiVersion: 'v1', kind: 'Service', metadata: { name: 'svc', namespace: 'default' }, spec: { ports: [{ port: 80 }] } }],
    ref: { name: 'svc', port: 80 },
  },
  static: { objects: [proxyBackend({ static: { host: '127.0.0.1', port: 9000 } })], ref: { group: 'switchboard.dev', kind: 'ProxyBackend', name: 'be' } },
  ai: { objects: [proxyBackend({ ai: { provider: { providerA: {} } } })], ref: { group: 'switchboard.dev', kind: 'ProxyBackend', name: 'be' } },
  mcp: { objects: [proxyBackend({ mcp: { targets: [{ name: 't', static: { host: '127.0.0.1', port: 3000 } }] } })], ref: { group: 'switchboard.dev', kind: 'ProxyBackend', name: 'be' } },
  a2a: { objects: [proxyBackend({ a2a: { host: '127.0.0.1', port: 9100 } })], ref: { group: 'switchboard.dev', kind: 'ProxyBackend', name: 'be' } },
  forwardProxy: { objects: [proxyBackend({ dynamicForwardProxy: { accessControl: { allowedHosts: ['*.example.com'] } } })], ref: { group: 'switchboard.dev', kind: 'ProxyBackend', name: 'be' } },
  // One MCP target, reached by a policy whose targetRef names it (sectionName).
  mcpTarget: {
    objects: [proxyBackend({ mcp: { targets: [{ name: 't', static: { host: '127.0.0.1', port: 3000 } }] } })], ref: { group: 'switchboard.dev', kind: 'ProxyBackend', name: 'be' },
    target: { group: 'switchboard.dev', kind: 'ProxyBackend', name: 'be', sectionName: 't' },
  },
  agentRuntime: { objects: [proxyBackend({ cloudA: { agentRuntime: { agentRuntimeId: 'arn:aws:bedrock-agentcore:us-east-1:123456789012:runtime/agent-x1' } } })], ref: { group: 'switchboard.dev', kind: 'ProxyBackend', name: 'be' } },
};

function proxyBackend(spec: Spec): KubeObject {
  return { apiVersion: SB, kind: 'ProxyBackend', metadata: { name: 'be', namespace: 'default' }, spec };
}

function world(kind: BackendKind, extra: KubeObject[]): KubeObject[] {
  const backend = BACKENDS[kind];
  const backends = backend.objects.map((o) => (o.kind === 'ProxyBackend' ? extra.find((e) => e.kind === 'ProxyBackend') ?? o : o));
  return [
    { apiVersion: GW, kind: 'GatewayClass', metadata: { name: 'sb' }, spec: { controllerName: 'switchboard.dev/gateway-controller' } },
    { apiVersion: GW, kind: 'Gateway', metadata: { name: 'gw', namespace: 'default' }, spec: { gatewayClassName: 'sb', listeners: [{ name: 'http', port: 80, protocol: 'HTTP' }] } },
    { apiVersion: GW, kind: 'HTTPRoute', metadata: { name: 'r', namespace: 'default' }, spec: { parentRefs: [{ name: 'gw' }], rules: [{ backendRefs: [backend.ref] }] } },
    ...backends,
    ...extra.filter((e) => e.kind !== 'ProxyBackend'),
  ];
}

function policy(section: string, value: Spec, target: Spec = { group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', name: 'r' }): KubeObject {
  const ref = section === 'frontend' ? { group: 'gateway.networking.k8s.io', kind: 'Gateway', name: 'gw' } : target;
  return { apiVersion: SB, kind: 'ProxyPolicy', metadata: { name: 'p', namespace: 'default' }, spec: { targetRefs: [ref], [section]: value } };
}

function statusOf(statuses: readonly ObjectStatus[], kind: string, name: string): Record<string, unknown> {
  const found = statuses.find((s) => s.kind === kind && s.metadata.name === name);
  assert.ok(found, `${kind}/${name} has a status`);
  return found.status as Record<string, unknown>;
}

function ancestorConditions(statuses: readonly ObjectStatus[]): Condition[] {
  const ancestors = statusOf(statuses, 'ProxyPolicy', 'p').ancestors as { conditions: Condition[] }[];
  assert.equal(ancestors.length, 1);
  return ancestors[0].conditions;
}

const accepted = (conditions: readonly Condition[]): Condition => {
  const c = conditions.find((x) => x.type === 'Accepted');
  assert.ok(c, 'has an Accepted condition');
  return c;
};

/**
 * One named row per NOT_APPLIED entry: the field as a user would write it (schema-valid), the
 * concrete path the status must name, and the member set alongside that keeps working (so the
 * policy is PartiallyApplied, not rejected).
 */
interface Case {
  readonly value: Spec;
  readonly path: string;
}
const CASES: Readonly<Record<string, Case>> = {
  'frontend tcp.keepalive.retries': { value: { tcp: { keepalive: { retries: 3 } } }, path: 'spec.frontend.tcp.keepalive.retries' },
  'frontend tcp.keepalive.interval': { value: { tcp: { keepalive: { interval: '10s' } } }, path: 'spec.frontend.tcp.keepalive.interval' },
  'traffic rateLimit.local[]': { value: { rateLimit: { local: [{ tokens: 100, unit: 'Minutes' }] } }, path: 'spec.traffic.rateLimit.local[0]' },
  'traffic rateLimit.global.descriptors[]': {
    value: { rateLimit: { global: { url: 'http://rls.example:8081', domain: 'd', descriptors: [{ entries: [{ name: 'k', expression: '"v"' }], unit: 'Tokens' }] } } },
    path: 'spec.traffic.rateLimit.global.descriptors[0]',
  },
  'backend tcp.keepalive.retries': { value: { tcp: { keepalive: { retries: 3 } } }, path: 'spec.backend.tcp.keepalive.retries' },
  'backend tcp.keepalive.interval': { value: { tcp: { keepalive: { interval: '10s' } } }, path: 'spec.backend.tcp.keepalive.interval' },
  'backend ai': { value: { ai: { modelAliases: { fast: 'gpt-4o-mini' } } }, path: 'spec.backend.ai' },
  'backend mcp': { value: { mcp: { authorization: { policy: { matchExpressions: ['true'] } } } }, path: 'spec.backend.mcp' },
  'backend http.version': { value: { http: { version: 'HTTP2' } }, path: 'spec.backend.http.version' },
  'backend health': { value: { health: { unhealthyCondition: 'response.code >= 500', eviction: { duration: '60s' } } }, path: 'spec.backend.health' },
  'backend health.unhealthyCondition': { value: { health: { unhealthyCondition: 'response.code >= 500' } }, path: 'spec.backend.health.unhealthyCondition' },
  'backend health.eviction': { value: { health: { eviction: { duration: '60s' } } }, path: 'spec.backend.health.eviction' },
  'backend auth.cloudB': { value: { auth: { cloudB: { workloadIdentity: {} } } }, path: 'spec.backend.auth.cloudB' },
  'backend auth.cloudC': { value: { auth: { cloudC: { type: 'AccessToken' } } }, path: 'spec.backend.auth.cloudC' },
  'backend transformation.response.set': { value: { transformation: { response: { set: [{ name: 'x-a', value: '"b"' }] } } }, path: 'spec.backend.transformation.response.set' },
  'backend transformation.response.add': { value: { transformation: { response: { add: [{ name: 'x-a', value: '"b"' }] } } }, path: 'spec.backend.transformation.response.add' },
  'backend transformation.response.remove': { value: { transformation: { response: { remove: ['x-a'] } } }, path: 'spec.backend.transformation.response.remove' },
};

/** Rows that share a path are told apart by their kinds. */
function rowName(row: NotAppliedRow): string {
  const base = `${row.scope} ${row.path}`;
  return NOT_APPLIED.filter((r) => r.scope === row.scope && r.path === row.path).length > 1 ? `${base} ${row.kinds?.join('/') ?? ''}` : base;
}

/** Something that applies on every kind, set next to the ignored field so the policy is only partly ignored. */
const WORKING: Readonly<Record<string, Spec>> = {
  frontend: { http: { http1MaxHeaders: 50 } },
  traffic: { csrf: { additionalOrigins: ['https://app.example'] } },
  backend: { http: { requestTimeout: '5s' } },
};

describe('NOT_APPLIED: every row is reported on the owning object with its path', () => {
  it('has one case per row and no case without a row', () => {
    assert.deepEqual(Object.keys(CASES).sort(), NOT_APPLIED.map(rowName).sort());
  });

  for (const row of NOT_APPLIED) {
    const name = rowName(row);
    const c = CASES[name];
    const kind: BackendKind = row.kinds?.[0] ?? 'Service';
    it(`${name}: not applied on ${row.kinds?.join(', ') ?? 'any kind'}`, () => {
      if (row.scope === 'provider') {
        const { statuses } = translate(world('ai', [proxyBackend({ ai: { provider: c.value } })]));
        const cond = accepted(statusOf(statuses, 'ProxyBackend', 'be').conditions as Condition[]);
        assert.equal(cond.status, 'False');
        assert.equal(cond.reason, 'PartiallyApplied');
        assert.ok(cond.message.includes(`${c.path}: ${explain(row)}`), cond.message);
        return;
      }
      // Alone: nothing this policy sets applies here, unless the row keeps part of its member working.
      const alone = ancestorConditions(translate(world(kind, [policy(row.scope, c.value, BACKENDS[kind].target)])).statuses);
      assert.equal(accepted(alone).status, 'False');
      // A global limit keeps its Requests descriptors and service; the case has only a Tokens one, but the member is not only that.
      const partly = row.partial === true || row.path.startsWith('rateLimit.global');
      assert.equal(accepted(alone).reason, partly ? 'PartiallyApplied' : 'Unsupported', accepted(alone).message);
      assert.equal(alone.find((x) => x.type === 'Attached')?.status, partly ? 'True' : 'False');
      assert.ok(accepted(alone).message.includes(c.path), accepted(alone).message);
      assert.ok(accepted(alone).message.includes(explain(row)), accepted(alone).message);

      // The working backend member is `http` itself: the case's `http` would replace it.
      if (row.scope === 'backend' && row.path === 'http.version') return;
      // With a member that works: PartiallyApplied, and Attached stays True (what applies is in effect).
      const withWorking = translate(world(kind, [policy(row.scope, { ...WORKING[row.scope], ...c.value }, BACKENDS[kind].target)]));
      const conditions = ancestorConditions(withWorking.statuses);
      assert.equal(accepted(conditions).reason, 'PartiallyApplied');
      assert.equal(conditions.find((x) => x.type === 'Attached')?.status, 'True');
    });

    if (row.kinds && row.scope !== 'provider') {
      // A kind where nothing in the case is ignored (a kind-limited row whose member is ignored elsewhere on the other kinds has none).
      const other = BACKEND_KINDS.find((k) => !row.kinds!.includes(k) && findNotApplied(row.scope, c.value, 'spec', new Set([k])).length === 0);
      if (other) {
        it(`${name}: applied (Accepted=True) on ${other}`, () => {
          const conditions = ancestorConditions(translate(world(other, [policy(row.scope, c.value, BACKENDS[other].target)])).statuses);
          assert.equal(accepted(conditions).status, 'True', accepted(conditions).message);
        });
      }
    }
  }
});

describe('not applied: what applies keeps working', () => {
  it('a CSRF check next to an ignored tokens limit stays in the IR; the ancestor is PartiallyApplied and Attached', () => {
    const traffic = { csrf: { additionalOrigins: ['https://app.example'] }, rateLimit: { local: [{ tokens: 100, unit: 'Minutes' as const }] } };
    const { config, statuses } = translate(world('Service', [policy('traffic', traffic)]));
    const rule = Object.values(config.routes)[0].rules[0];
    assert.deepEqual(rule.traffic?.csrf, traffic.csrf);
    const conditions = ancestorConditions(statuses);
    assert.equal(accepted(conditions).reason, 'PartiallyApplied');
    assert.match(accepted(conditions).message, /spec\.traffic\.rateLimit\.local\[0\] \(on Service backends\)/);
    assert.deepEqual(conditions.find((x) => x.type === 'Attached'), { type: 'Attached', status: 'True', reason: 'Attached', message: 'Policy is attached' });
  });

  it('a Gateway target reaching a Service route and an AI route names only the kind it is ignored on', () => {
    const objects = world('Service', [policy('traffic', { rateLimit: { local: [{ tokens: 100, unit: 'Minutes' }] } }, { group: 'gateway.networking.k8s.io', kind: 'Gateway', name: 'gw' })]);
    objects.push(proxyBackend({ ai: { provider: { providerA: {} } } }), {
      apiVersion: GW, kind: 'HTTPRoute', metadata: { name: 'llm', namespace: 'default' },
      spec: { parentRefs: [{ name: 'gw' }], rules: [{ backendRefs: [BACKENDS.ai.ref] }] },
    });
    const cond = accepted(ancestorConditions(translate(objects).statuses));
    assert.equal(cond.reason, 'PartiallyApplied', 'the tokens limit still applies on the AI route');
    assert.match(cond.message, /spec\.traffic\.rateLimit\.local\[0\] \(on Service backends\)/);
    assert.doesNotMatch(cond.message, /on [^)]*\bai\b[^)]* backends/);
  });

  it('a policy that sets nothing ignored stays Accepted=True', () => {
    const conditions = ancestorConditions(translate(world('ai', [policy('traffic', { rateLimit: { local: [{ tokens: 100, unit: 'Minutes' }] } })])).statuses);
    assert.deepEqual(accepted(conditions), { type: 'Accepted', status: 'True', reason: 'Accepted', message: 'Policy is accepted' });
  });

  const headerOnly: readonly { name: string; section: string; value: Spec; kinds: readonly BackendKind[] }[] = [
    { name: 'traffic transformation.response headers', section: 'traffic', value: { transformation: { response: { set: [{ name: 'x-a', value: '"b"' }] } } }, kinds: ['ai', 'mcp'] },
    { name: 'backend transformation headers', section: 'backend', value: { transformation: { request: { set: [{ name: 'x-a', value: '"b"' }] }, response: { remove: ['x-b'] } } }, kinds: ['ai', 'mcp'] },
  ];
  for (const c of headerOnly) {
    for (const kind of c.kinds) {
      it(`${c.name} apply on ${kind}: Accepted=True (only body changes are reported)`, () => {
        const conditions = ancestorConditions(translate(world(kind, [policy(c.section, c.value)])).statuses);
        assert.equal(accepted(conditions).status, 'True', accepted(conditions).message);
      });
    }
  }

  const bodies: readonly { name: string; section: string; value: Spec }[] = [
    { name: 'traffic transformation.response.body', section: 'traffic', value: { transformation: { response: { body: 'string(response.body)' } } } },
    { name: 'traffic extProc with its response phases on', section: 'traffic', value: { extProc: { url: 'http://extproc.example:9000' } } },
    { name: 'backend transformation request.body and response.body', section: 'backend', value: { transformation: { request: { body: 'string(request.body)' }, response: { body: 'string(response.body)' } } } },
  ];
  for (const c of bodies) {
    for (const kind of ['ai', 'mcp'] as const) {
      it(`${c.name} apply on ${kind} (response filters run on its answers): Accepted=True`, () => {
        const conditions = ancestorConditions(translate(world(kind, [policy(c.section, c.value)])).statuses);
        assert.equal(accepted(conditions).status, 'True', accepted(conditions).message);
      });
    }
  }

  // MCP target calls retry and track health (docs/mcp.md): nothing to report there.
  const onMcp: readonly { name: string; section: string; value: Spec }[] = [
    { name: 'traffic retry', section: 'traffic', value: { retry: { codes: [503], attempts: 2 } } },
    { name: 'backend health', section: 'backend', value: { health: { eviction: { duration: '5s' } } } },
  ];
  for (const c of onMcp) {
    it(`${c.name} applies on mcp: Accepted=True`, () => {
      const conditions = ancestorConditions(translate(world('mcp', [policy(c.section, c.value)])).statuses);
      assert.equal(accepted(conditions).status, 'True', accepted(conditions).message);
    });
  }

  it('an MCP target\'s own transformation with request headers only (sectionName) applies: Accepted=True', () => {
    const conditions = ancestorConditions(translate(world('mcpTarget', [policy('backend', { transformation: { request: { set: [{ name: 'x-a', value: '"b"' }] } } }, BACKENDS.mcpTarget.target)])).statuses);
    assert.equal(accepted(conditions).status, 'True', accepted(conditions).message);
  });

  // AI providers are chosen by health and evicted per the policy (docs/llm.md "Provider health").
  it('backend health applies on ai: Accepted=True', () => {
    const conditions = ancestorConditions(translate(world('ai', [policy('backend', { health: { unhealthyCondition: 'response.code >= 500', eviction: { duration: '5s' } } })])).statuses);
    assert.equal(accepted(conditions).status, 'True', accepted(conditions).message);
  });

  it('an invalid policy keeps Invalid (fail closed), not a not-applied reason', () => {
    const conditions = ancestorConditions(translate(world('ai', [policy('traffic', { retry: { attempts: 2 }, authorization: { policy: { matchExpressions: ['(('] } } })])).statuses);
    assert.equal(accepted(conditions).reason, 'Invalid');
  });
});

describe('not applied: whole objects and backend types', () => {
  it('ProxyParameters: Accepted=False Unsupported naming the fields it sets', () => {
    const { statuses } = translate([{ apiVersion: SB, kind: 'ProxyParameters', metadata: { name: 'params', namespace: 'default' }, spec: { logging: { level: 'debug' }, workload: { kind: 'DaemonSet' } } }]);
    const cond = accepted(statusOf(statuses, 'ProxyParameters', 'params').conditions as Condition[]);
    assert.equal(cond.reason, 'Unsupported');
    assert.match(cond.message, /^Not applied: spec\.logging, spec\.workload: .*\(issue 16\)$/);
  });

  it('ProxyModel: one parents entry per parent of ours, Accepted=False Unsupported; none for another controller\'s Gateway', () => {
    const model = { apiVersion: SB, kind: 'ProxyModel', metadata: { name: 'gpt', namespace: 'default' }, spec: { parentRefs: [{ name: 'gw' }, { name: 'theirs' }], provider: 'VendorA' } };
    const { statuses } = translate([...world('Service', []), model as KubeObject]);
    const parents = statusOf(statuses, 'ProxyModel', 'gpt').parents as { parentRef: Spec; conditions: Condition[] }[];
    assert.deepEqual(parents.map((p) => p.parentRef.name), ['gw']);
    assert.equal(parents[0].conditions[0].reason, 'Unsupported');
    assert.match(parents[0].conditions[0].message, /ProxyModel API is disabled/);
    // With the API on, a Gateway parent serves the model through the models rules of its routes; this world has none (proxy-model-status.ts).
    const on = translate([...world('Service', []), model as KubeObject], { proxyModels: true }).statuses;
    const gateway = (statusOf(on, 'ProxyModel', 'gpt').parents as { conditions: Condition[] }[])[0].conditions[0];
    assert.equal(gateway.reason, 'NoMatchingParent');
    assert.match(gateway.message, /no HTTPRoute attached to Gateway default\/gw has a rule whose only backendRef is the ProxyModel backend/);
  });

  it('ProxyBackend spec.a2a: served, Accepted=True (issue 17 built it)', () => {
    const cond = accepted(statusOf(translate([proxyBackend({ a2a: { host: 'agent', port: 8080 } })]).statuses, 'ProxyBackend', 'be').conditions as Condition[]);
    assert.equal(cond.status, 'True');
    assert.equal(cond.reason, 'Accepted');
  });

  it('ProxyBackend spec.cloudA: served, Accepted=True, the route carries the agent runtime (issue 17 built it)', () => {
    const { statuses, config } = translate(world('agentRuntime', []));
    const cond = accepted(statusOf(statuses, 'ProxyBackend', 'be').conditions as Condition[]);
    assert.equal(cond.status, 'True', cond.message);
    assert.equal(cond.reason, 'Accepted');
    const backend = Object.values(config.backends).find((b) => b.agentRuntime !== undefined);
    assert.deepEqual(backend?.agentRuntime, { runtimeId: 'arn:aws:bedrock-agentcore:us-east-1:123456789012:runtime/agent-x1', region: 'us-east-1' });
  });

  it('ProxyBackend spec.dynamicForwardProxy: Accepted=False Invalid without access control, True with it', () => {
    const without = accepted(statusOf(translate([proxyBackend({ dynamicForwardProxy: {} })]).statuses, 'ProxyBackend', 'be').conditions as Condition[]);
    assert.equal(without.reason, 'Invalid');
    assert.match(without.message, /accessControl\.allowedHosts is required/);
    const withIt = accepted(statusOf(translate([proxyBackend({ dynamicForwardProxy: { accessControl: { allowedHosts: ['*.example.com'] } } })]).statuses, 'ProxyBackend', 'be').conditions as Condition[]);
    assert.equal(withIt.status, 'True');
  });

  it('ProxyBackend inline policies and MCP target policies: PartiallyApplied with the path under spec', () => {
    const inline = translate([proxyBackend({ ai: { provider: { providerA: {} } }, policies: { tcp: { keepalive: { retries: 2 } } } })]).statuses;
    const a = accepted(statusOf(inline, 'ProxyBackend', 'be').conditions as Condition[]);
    assert.equal(a.reason, 'PartiallyApplied');
    assert.match(a.message, /spec\.policies\.tcp\.keepalive\.retries/);
    const target = translate([proxyBackend({ mcp: { targets: [{ name: 't', static: { host: 'h', port: 1, policies: { tcp: { keepalive: { retries: 2 } } } } }] } })]).statuses;
    const m = accepted(statusOf(target, 'ProxyBackend', 'be').conditions as Condition[]);
    assert.equal(m.reason, 'PartiallyApplied');
    assert.match(m.message, /spec\.mcp\.targets\[0\]\.static\.policies\.tcp\.keepalive\.retries/);
  });

  for (const policies of [{ http: { requestTimeout: '5s' } }, { health: { eviction: { duration: '5s' } } }]) {
    it(`a ProxyBackend that sets nothing ignored stays Accepted=True: ${Object.keys(policies).join()} on ai`, () => {
      const cond = accepted(statusOf(translate([proxyBackend({ ai: { provider: { providerA: {} } }, policies })]).statuses, 'ProxyBackend', 'be').conditions as Condition[]);
      assert.equal(cond.status, 'True', cond.message);
    });
  }
});
