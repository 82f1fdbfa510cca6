/** ProxyPolicy: targets plus frontend, traffic and backend policy. */
import type { Static } from 'typebox';
import { List, MapOf, Obj, OneOf, Opt, Str } from '../schema/build.ts';
import { atMostOne, exactlyOne, has } from '../schema/rules.ts';
import type { CrossFieldRule, Node } from '../schema/rules.ts';
import { Port, SectionName } from '../scalars.ts';
import { Conditions, ParentReference } from '../refs.ts';
import { BackendFull } from '../policies/variants.ts';
import { Frontend } from './frontend.ts';
import { Traffic } from './traffic.ts';

const targetMembers = () => ({
  group: Str(0, 253, { description: 'API group of the target; empty means core' }),
  kind: Str(1, 63),
  sectionName: Opt(SectionName({ description: 'listener, route rule, Service port or sub-backend' })),
  port: Opt(Port({ description: 'frontend policies targeting a Gateway only' })),
});
const targetRules = [atMostOne(['sectionName', 'port'])];

export const PolicyTargetReference = () => Obj({ ...targetMembers(), name: Str(1, 253) }, { rules: targetRules });
export const PolicyTargetSelector = () => Obj({ ...targetMembers(), matchLabels: MapOf(Str(0, 63)) }, { rules: targetRules });

type Target = { kind: string; sectionName?: string; port?: number };
const targets = (s: Node): Target[] => [...((s.targetRefs as Target[]) ?? []), ...((s.targetSelectors as Target[]) ?? [])];
/** CEL that holds when `predicate` (over `t`) holds for every target of either list. */
const everyTarget = (predicate: string) =>
  `(!has(self.targetRefs) || self.targetRefs.all(t, ${predicate})) && (!has(self.targetSelectors) || self.targetSelectors.all(t, ${predicate}))`;

const policyRules: CrossFieldRule[] = [
  exactlyOne(['targetRefs', 'targetSelectors']),
  {
    path: '.strategy', message: 'strategy is valid only for traffic policies',
    cel: '!has(self.strategy) || has(self.traffic)', check: (s) => !has(s, 'strategy') || has(s, 'traffic'),
  },
  {
    path: '.frontend', message: 'frontend policies may only target a Gateway (not a Listener or ListenerSet)',
    cel: `!has(self.frontend) || (${everyTarget("t.kind == 'Gateway' && !has(t.sectionName)")})`,
    check: (s) => !has(s, 'frontend') || targets(s).every((t) => t.kind === 'Gateway' && t.sectionName === undefined),
  },
  {
    path: '', message: 'port may only be set on frontend policies targeting a Gateway',
    cel: everyTarget("!has(t.port) || (has(self.frontend) && t.kind == 'Gateway')"),
    check: (s) => targets(s).every((t) => t.port === undefined || (has(s, 'frontend') && t.kind === 'Gateway')),
  },
  {
    path: '.traffic.phase', message: 'phase PreRouting requires Gateway or Listener targets',
    cel: `!has(self.traffic) || !has(self.traffic.phase) || self.traffic.phase != 'PreRouting' || (${everyTarget("t.kind == 'Gateway'")})`,
    check: (s) => (s.traffic as Node | undefined)?.phase !== 'PreRouting' || targets(s).every((t) => t.kind === 'Gateway'),
  },
];

export const ProxyPolicySpec = Obj({
  targetRefs: Opt(List(PolicyTargetReference(), { min: 1, max: 16, description: 'same-namespace objects the policy applies to' })),
  targetSelectors: Opt(List(PolicyTargetSelector(), { min: 1, max: 16, description: 'same-namespace objects selected by label' })),
  strategy: Opt(Obj({
    inheritance: Opt(OneOf(['Default', 'Override'] as const, { description: 'Override blocks more-specific traffic policies' })),
  })),
  frontend: Opt(Frontend()),
  traffic: Opt(Traffic()),
  backend: Opt(BackendFull('targets Gateway, ListenerSet, Route, or Service/Backend')),
}, { rules: policyRules });

export const PolicyAncestorStatus = () =>
  Obj({
    ancestorRef: ParentReference(),
    controllerName: Str(1, 253, { pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/[A-Za-z0-9/\\-._~%!$&\'()*+,;=:]+$', 'x-switchboard-expected': 'DOMAIN/PATH' }),
    conditions: Opt(Conditions(8, 1)),
  });

export const ProxyPolicyStatus = Obj({
  conditions: Opt(Conditions(8)),
  ancestors: List(PolicyAncestorStatus(), { max: 16 }),
});

export type ProxyPolicySpec = Static<typeof ProxyPolicySpec>;
export type ProxyPolicyStatus = Static<typeof ProxyPolicyStatus>;
