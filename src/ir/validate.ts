/**
 * Structural checks of a ProxyConfig, run before it is published to the proxies. The translator
 * never emits a config that fails them: a problem here is a translator bug, so the publisher logs
 * the problems and keeps serving the previous config instead of handing the proxies a config that
 * would crash them or send traffic to the wrong place.
 *
 * What is checked is what the proxy relies on without checking itself:
 *   - keys: every record key equals the object's `key`; bind, listener, rule keys are unique;
 *   - references: listener route attachments, rule backends, mirror filters, `*ByListener` keys,
 *     and every `backendKey` in an effective policy's declared reference fields (extAuth, extProc,
 *     rate-limit service, JWKS, tunnel, token endpoints …: src/ir/references.ts; a `backendKey`
 *     inside free-form JSON is data) name an existing route, backend or listener;
 *   - ports: binds use distinct ports in 1..65535, their listeners speak the bind's protocol and
 *     HTTPS listeners carry a certificate; endpoint ports are in 1..65535;
 *   - numbers: backend weights, mirror percents and timeouts are finite and non-negative;
 *   - CEL: authorization rules and conditional conditions hold non-empty expressions;
 *   - credential members the proxy reads through their types (backend `auth` with its token
 *     mechanisms, `jwtAuthentication.mcp`): the shape their type promises (src/ir/validate-auth.ts);
 *   - AI and MCP backends: their key is the backend's, providers and targets are named uniquely,
 *     and `subBackends` only names providers or targets of the backend.
 *
 * Plain code over the config (no schema walk): a 10k-route config is checked in a few ms.
 */
import type { AiBackendIR } from './ai.ts';
import type { AuthorizationPolicy, BackendPolicy, Conditional, FrontendPolicy, TrafficPolicy } from './policy.ts';
import type { Backend, Bind, Filter, ProxyConfig, Route, WeightedBackend } from './types.ts';
import { backendPolicyMemberReferences, frontendPolicyReferences, trafficPolicyReferences, type ReferenceVisitor } from './references.ts';
import { checkBackendAuth, checkJwtMcp } from './validate-auth.ts';
import { deltaFrom, recordKeys } from './config-delta.ts';
import { at, renderPath, root, type IrPath } from './validate-path.ts';

export interface IrProblem {
  /** Where, in JavaScript property-access form from the config root: `routes["ns/r"].rules[0].backends[1].backendKey`. */
  readonly path: string;
  readonly message: string;
}

const BINDS = root('binds');
const ROUTES = root('routes');
const BACKENDS = root('backends');

const isPort = (n: unknown): boolean => typeof n === 'number' && Number.isInteger(n) && n >= 1 && n <= 65535;
const isNonNegative = (n: unknown): boolean => typeof n === 'number' && Number.isFinite(n) && n >= 0;

class Checker {
  readonly problems: IrProblem[] = [];
  readonly #config: ProxyConfig;
  readonly #listenerKeys = new Set<string>();

  constructor(config: ProxyConfig) {
    this.#config = config;
  }

  /** The path becomes text here only: a clean config never pays for it (validate-path.ts). */
  report(path: IrPath, message: string): void {
    this.problems.push({ path: renderPath(path), message });
  }

  readonly #report = (path: IrPath, message: string): void => this.report(path, message);

  /**
   * Binds first: the other checks read their listener keys. A bind in `clean` (one of a config
   * found clean, while no route or backend it could name went away) is not walked again: only
   * what involves other binds (keys, ports, listener keys) is checked for it.
   */
  binds(clean?: ReadonlySet<Bind>): void {
    this.#binds(clean);
  }

  /** Routes and Backends; those that are the same objects under the same keys in `unchangedFrom` are skipped (see validateConfig). */
  entries(unchangedFrom?: ProxyConfig): void {
    const previousRoutes = unchangedFrom?.routes;
    const previousBackends = unchangedFrom?.backends;
    // The keys through recordKeys: they stay kept for the records, so a later patch of them
    // (patchConfig, on the next edit) does not read 10k keys again.
    const { routes, backends } = this.#config;
    const routeKeys = recordKeys(routes);
    for (let i = 0; i < routeKeys.length; i++) {
      const key = routeKeys[i] as string;
      const route = routes[key] as Route;
      if (previousRoutes?.[key] !== route) this.#route(at(ROUTES, key), key, route);
    }
    const backendKeys = recordKeys(backends);
    for (let i = 0; i < backendKeys.length; i++) {
      const key = backendKeys[i] as string;
      const backend = backends[key] as Backend;
      if (previousBackends?.[key] !== backend) this.#backend(at(BACKENDS, key), key, backend);
    }
  }

  /** The Routes and Backends under these keys (the rest is known clean: see validateConfig). */
  changedEntries(routeKeys: readonly string[], backendKeys: readonly string[]): void {
    const { routes, backends } = this.#config;
    for (const key of routeKeys) if (Object.hasOwn(routes, key)) this.#route(at(ROUTES, key), key, routes[key] as Route);
    for (const key of backendKeys) if (Object.hasOwn(backends, key)) this.#backend(at(BACKENDS, key), key, backends[key] as Backend);
  }

  /** Every listener key, once the binds were checked. */
  get listenerKeys(): ReadonlySet<string> {
    return this.#listenerKeys;
  }

  #backendExists(path: IrPath, key: string): void {
    if (!Object.hasOwn(this.#config.backends, key)) this.report(path, `backend ${JSON.stringify(key)} is not in backends`);
  }

  #binds(clean: ReadonlySet<Bind> | undefined): void {
    const bindKeys = new Set<string>();
    const ports = new Map<number, string>();
    this.#config.binds.forEach((bind, i) => {
      const path = at(BINDS, i);
      if (bindKeys.has(bind.key)) this.report(at(path, 'key'), `duplicate bind key ${JSON.stringify(bind.key)}`);
      bindKeys.add(bind.key);
      if (!isPort(bind.port)) this.report(at(path, 'port'), `port ${String(bind.port)} is not in 1..65535`);
      else if (ports.has(bind.port)) this.report(at(path, 'port'), `port ${bind.port} is also bound by ${ports.get(bind.port)}`);
      else ports.set(bind.port, bind.key);
      if (clean?.has(bind)) {
        this.#listenerKeysOf(path, bind);
        return;
      }
      this.#listeners(path, bind);
      if (bind.frontend) this.#frontend(at(path, 'frontend'), bind.frontend);
    });
  }

  /** A known-clean bind's listener keys, checked for duplicates against the other binds'. */
  #listenerKeysOf(bindPath: IrPath, bind: Bind): void {
    bind.listeners.forEach((listener, i) => {
      if (this.#listenerKeys.has(listener.key)) this.report(at(at(at(bindPath, 'listeners'), i), 'key'), `duplicate listener key ${JSON.stringify(listener.key)}`);
      this.#listenerKeys.add(listener.key);
    });
  }

  #listeners(bindPath: IrPath, bind: Bind): void {
    bind.listeners.forEach((listener, i) => {
      const path = at(at(bindPath, 'listeners'), i);
      if (this.#listenerKeys.has(listener.key)) this.report(at(path, 'key'), `duplicate listener key ${JSON.stringify(listener.key)}`);
      this.#listenerKeys.add(listener.key);
      if (listener.protocol !== bind.protocol) this.report(at(path, 'protocol'), `listener protocol ${listener.protocol} on a ${bind.protocol} bind`);
      if (listener.protocol === 'HTTPS' && !(listener.tls && listener.tls.certificates.length > 0)) this.report(at(path, 'tls'), 'an HTTPS listener needs at least one certificate');
      listener.routes.forEach((attachment, j) => {
        if (!Object.hasOwn(this.#config.routes, attachment.routeKey)) this.report(at(at(at(path, 'routes'), j), 'routeKey'), `route ${JSON.stringify(attachment.routeKey)} is not in routes`);
      });
      if (listener.preRouting) this.#traffic(at(path, 'preRouting'), listener.preRouting);
      if (listener.sessionKey !== undefined && !/^[0-9a-f]{64}$/.test(listener.sessionKey)) this.report(at(path, 'sessionKey'), 'a session key is 64 lowercase hexadecimal characters');
    });
  }

  #route(path: IrPath, key: string, route: Route): void {
    if (route.key !== key) this.report(at(path, 'key'), `key ${JSON.stringify(route.key)} differs from its record key`);
    const ruleKeys = new Set<string>();
    route.rules.forEach((rule, i) => {
      const rulePath = at(at(path, 'rules'), i);
      if (ruleKeys.has(rule.key)) this.report(at(rulePath, 'key'), `duplicate rule key ${JSON.stringify(rule.key)}`);
      ruleKeys.add(rule.key);
      this.#filters(at(rulePath, 'filters'), rule.filters);
      rule.backends.forEach((backend, j) => this.#weightedBackend(at(at(rulePath, 'backends'), j), backend));
      for (const name of ['requestMs', 'backendRequestMs'] as const) {
        const value = rule.timeouts?.[name];
        if (value !== undefined && !isNonNegative(value)) this.report(at(at(rulePath, 'timeouts'), name), `${String(value)} is not a non-negative number of milliseconds`);
      }
      if (rule.traffic) this.#traffic(at(rulePath, 'traffic'), rule.traffic);
      this.#byListener(at(rulePath, 'trafficByListener'), rule.trafficByListener, (p, t) => this.#traffic(p, t));
    });
  }

  /** Listener keys are known once every bind was read (binds come first: validateConfig). */
  #byListener<T>(path: IrPath, byListener: Readonly<Record<string, T>> | undefined, check: (path: IrPath, value: T) => void): void {
    if (!byListener) return;
    for (const [listenerKey, value] of Object.entries(byListener)) {
      const p = at(path, listenerKey);
      if (!this.#listenerKeys.has(listenerKey)) this.report(p, `listener ${JSON.stringify(listenerKey)} is not in any bind`);
      check(p, value);
    }
  }

  #filters(path: IrPath, filters: readonly Filter[]): void {
    filters.forEach((filter, i) => {
      if (filter.type !== 'RequestMirror') return;
      const p = at(path, i);
      this.#backendExists(at(p, 'backendKey'), filter.backendKey);
      if (filter.percent !== undefined && !(isNonNegative(filter.percent) && filter.percent <= 100)) this.report(at(p, 'percent'), `${String(filter.percent)} is not in 0..100`);
    });
  }

  #weightedBackend(path: IrPath, backend: WeightedBackend): void {
    if (backend.backendKey !== null) this.#backendExists(at(path, 'backendKey'), backend.backendKey);
    if (!isNonNegative(backend.weight) || !Number.isInteger(backend.weight)) this.report(at(path, 'weight'), `weight ${String(backend.weight)} is not a non-negative integer`);
    this.#filters(at(path, 'filters'), backend.filters);
    if (backend.backendPolicy) this.#backendPolicy(at(path, 'backendPolicy'), backend.backendPolicy);
    this.#byListener(at(path, 'backendPolicyByListener'), backend.backendPolicyByListener, (p, b) => this.#backendPolicy(p, b));
  }

  #backend(path: IrPath, key: string, backend: Backend): void {
    if (backend.key !== key) this.report(at(path, 'key'), `key ${JSON.stringify(backend.key)} differs from its record key`);
    backend.endpoints.forEach((endpoint, i) => {
      const p = at(at(path, 'endpoints'), i);
      if (endpoint.host === '') this.report(at(p, 'host'), 'empty host');
      if (!isPort(endpoint.port)) this.report(at(p, 'port'), `port ${String(endpoint.port)} is not in 1..65535`);
    });
    if (backend.ai) {
      const p = at(path, 'ai');
      if (backend.ai.key !== key) this.report(at(p, 'key'), `key ${JSON.stringify(backend.ai.key)} differs from the backend's`);
      // A ProxyModel rule's backend has no groups of its own (an empty rule answers 404 per request): its models' groups are its providers.
      if (backend.ai.groups.length === 0 && backend.ai.models === undefined) this.report(at(p, 'groups'), 'an AI backend needs at least one provider');
      const names = new Set<string>();
      const providers = (groupsPath: IrPath, groups: AiBackendIR['groups']) => groups.forEach((group, i) => group.providers.forEach((provider, j) => {
        const pp = at(at(at(at(groupsPath, 'groups'), i), 'providers'), j);
        if (names.has(provider.name)) this.report(at(pp, 'name'), `duplicate provider name ${JSON.stringify(provider.name)}`);
        names.add(provider.name);
        if (provider.policies) this.#backendPolicy(at(pp, 'policies'), provider.policies);
      }));
      providers(p, backend.ai.groups);
      backend.ai.models?.forEach((model, i) => {
        const mp = at(at(p, 'models'), i);
        providers(mp, model.groups);
        this.#authorization(at(at(mp, 'authorization'), 'rules'), model.authorization?.rules);
      });
    }
    if (backend.mcp) {
      const p = at(path, 'mcp');
      if (backend.mcp.key !== key) this.report(at(p, 'key'), `key ${JSON.stringify(backend.mcp.key)} differs from the backend's`);
      const names = new Set<string>();
      backend.mcp.targets.forEach((target, i) => {
        const tp = at(at(p, 'targets'), i);
        if (names.has(target.name)) this.report(at(tp, 'name'), `duplicate target name ${JSON.stringify(target.name)}`);
        names.add(target.name);
        if (!isPort(target.port)) this.report(at(tp, 'port'), `port ${String(target.port)} is not in 1..65535`);
        if (target.policies) this.#backendPolicy(at(tp, 'policies'), target.policies);
      });
      this.#authorization(at(p, 'authorization'), backend.mcp.authorization);
    }
  }

  #traffic(path: IrPath, policy: TrafficPolicy): void {
    this.#authorization(at(at(path, 'authorization'), 'rules'), policy.authorization?.rules);
    for (const member of ['transformation', 'extProc', 'extAuth', 'rateLimit', 'directResponse'] as const) {
      this.#conditions(at(path, member), policy[member]);
    }
    if (policy.delay && policy.delay.duration.trim() === '') this.report(at(at(path, 'delay'), 'duration'), 'empty CEL expression');
    if (policy.jwtAuthentication?.mcp) checkJwtMcp(this.#report, at, at(at(path, 'jwtAuthentication'), 'mcp'), policy.jwtAuthentication.mcp);
    trafficPolicyReferences(policy, this.#reference(path));
  }

  #backendPolicy(path: IrPath, policy: BackendPolicy): void {
    this.#authorization(at(at(path, 'mcp'), 'authorization'), policy.mcp?.authorization);
    if (policy.health?.unhealthyCondition !== undefined && policy.health.unhealthyCondition.trim() === '') {
      this.report(at(at(path, 'health'), 'unhealthyCondition'), 'empty CEL expression');
    }
    if (policy.auth) checkBackendAuth(this.#report, at, at(path, 'auth'), policy.auth);
    backendPolicyMemberReferences(policy, this.#reference(path));
    const { subBackends } = policy;
    if (subBackends) for (const [name, sub] of Object.entries(subBackends)) this.#backendPolicy(at(at(path, 'subBackends'), name), sub);
  }

  #frontend(path: IrPath, policy: FrontendPolicy): void {
    this.#authorization(at(at(path, 'networkAuthorization'), 'rules'), policy.networkAuthorization?.rules);
    frontendPolicyReferences(policy, this.#reference(path));
  }

  #authorization(path: IrPath, rules: AuthorizationPolicy['rules'] | readonly { readonly matchExpressions: readonly string[] }[] | undefined): void {
    rules?.forEach((rule, i) => rule.matchExpressions.forEach((expression, j) => {
      if (expression.trim() === '') this.report(at(at(at(path, i), 'matchExpressions'), j), 'empty CEL expression');
    }));
  }

  #conditions(path: IrPath, member: object | undefined): void {
    if (!member || !('conditional' in member) || !Array.isArray(member.conditional)) return;
    (member.conditional as Conditional<unknown>['conditional']).forEach((entry, i) => {
      if (entry.condition !== undefined && entry.condition.trim() === '') this.report(at(at(at(path, 'conditional'), i), 'condition'), 'empty CEL expression');
    });
  }

  /** Reports a policy's `backendKey` (src/ir/references.ts: declared reference fields only) that names no backend. */
  #reference(path: IrPath): ReferenceVisitor {
    return (key, trail) => {
      if (!Object.hasOwn(this.#config.backends, key)) this.#backendExists(trail.reduce<IrPath>((p, k) => at(p, k), path), key);
    };
  }
}

/**
 * The config's structural problems; empty when the proxies can serve it.
 *
 * `previous`, when given, is a config this function found clean. A Route or Backend that is the
 * same object under the same key there is not checked again: its checks read only itself, the
 * backend keys and the listener keys, so it stays clean while no backend and no listener went
 * away (otherwise everything is checked). After one route edit at 10k routes that is one route
 * instead of 10k (~35 ms on the serving thread per change).
 *
 * When `config` was built from `previous` by patchConfig (src/ir/config-delta.ts), the changed
 * keys are known and nothing else is read: not the 10k unchanged entries (Object.entries of the
 * records alone took ~4 ms per edit), and not a bind that is the same object as one of
 * `previous` (its 1,000s of route attachments) while no route and no backend went away — a bind's
 * checks read only itself and the route and backend keys. Binds whose keys, ports or listener
 * keys now collide with another's are still reported: those checks run for every bind.
 */
export function validateConfig(config: ProxyConfig, previous?: ProxyConfig): readonly IrProblem[] {
  const checker = new Checker(config);
  const delta = previous && deltaFrom(config, previous);
  if (previous && delta) {
    const removedAny = delta.routesRemoved.length > 0 || delta.backendsRemoved.length > 0;
    checker.binds(removedAny ? undefined : new Set(previous.binds));
    if (!lostListener(previous, checker) && delta.backendsRemoved.length === 0) checker.changedEntries(delta.routesSet, delta.backendsSet);
    else checker.entries();
    return checker.problems;
  }
  checker.binds();
  checker.entries(previous && !lostAny(previous, config, checker) ? previous : undefined);
  return checker.problems;
}

/** Whether a backend or a listener of `previous` is gone from `config` (the checker has read the binds). */
function lostAny(previous: ProxyConfig, config: ProxyConfig, checker: Checker): boolean {
  for (const key of recordKeys(previous.backends)) if (!Object.hasOwn(config.backends, key)) return true;
  return lostListener(previous, checker);
}

function lostListener(previous: ProxyConfig, checker: Checker): boolean {
  for (const bind of previous.binds) for (const listener of bind.listeners) if (!checker.listenerKeys.has(listener.key)) return true;
  return false;
}
