/** The LLM provider configs (providerA..providerG, custom) and the members every provider shares. */
import { List, Obj, OneOf, Opt, Str } from '../schema/build.ts';
import { has } from '../schema/rules.ts';
import type { CrossFieldRule } from '../schema/rules.ts';
import { LongString, Port, ShortString, TinyString } from '../scalars.ts';
import { LocalBackendObjectReference } from '../refs.ts';

export const PROVIDER_FORMATS = ['Completions', 'Messages', 'Responses', 'Embeddings', 'TokenCount', 'Realtime', 'Rerank'] as const;
export const LLM_PROVIDERS = ['providerA', 'providerB', 'providerC', 'providerD', 'providerE', 'providerF', 'providerG', 'custom'] as const;

const model = () => Opt(ShortString({ description: "model to use; when unset the request's model is used" }));

const ModerationMode = () => Obj({ mode: OneOf(['Score', 'Block'] as const, { description: 'Score returns scores; Block blocks flagged content' }) });

export const ProviderA = () =>
  Obj({
    model: model(),
    moderation: Opt(Obj({
      model: Opt(ShortString({ default: 'omni-moderation-latest' })),
      policy: Opt(Obj({ input: Opt(ModerationMode()), output: Opt(ModerationMode()) })),
    }, { description: 'inline moderation; not injected when unset' })),
  });

export const ProviderB = () =>
  Obj({
    endpoint: ShortString({ description: 'resource endpoint (a scheme is stripped)' }),
    deploymentName: Opt(ShortString({ description: 'required when apiVersion is not v1' })),
    apiVersion: Opt(TinyString({ default: 'v1' })),
  }, {
    rules: [{
      path: '.deploymentName',
      message: 'deploymentName is required when apiVersion is not v1',
      cel: "!has(self.apiVersion) || self.apiVersion == 'v1' || has(self.deploymentName)",
      check: (s) => s.apiVersion === undefined || s.apiVersion === 'v1' || has(s, 'deploymentName'),
    }],
  });

export const RESOURCE_TYPES = ['ResourceTypeA', 'ResourceTypeB'] as const;
export const projectNameRule: CrossFieldRule = {
  path: '.projectName',
  message: 'projectName is required when resourceType is ResourceTypeB',
  cel: "self.resourceType != 'ResourceTypeB' || has(self.projectName)",
  check: (s) => s.resourceType !== 'ResourceTypeB' || has(s, 'projectName'),
};

export const ProviderC = () =>
  Obj({
    resourceName: ShortString({ description: 'builds the endpoint host' }),
    resourceType: OneOf(RESOURCE_TYPES, { description: 'selects the host suffix' }),
    apiVersion: Opt(TinyString({ default: 'v1' })),
    projectName: Opt(ShortString({ description: 'project-scoped path prefix; required for ResourceTypeB' })),
    model: model(),
  }, { rules: [projectNameRule] });

export const ProviderF = () => Obj({ model: model(), projectId: TinyString(), region: TinyString() });

export const CloudARegion = () => Str(1, 63, { pattern: '^[a-z0-9-]+$', default: 'us-east-1', 'x-switchboard-expected': 'lowercase letters, digits and -' });
export const Guardrail = () => Obj({ identifier: ShortString(), version: ShortString() }, { description: 'no guardrail when unset' });

export const ProviderG = () => Obj({ region: Opt(CloudARegion()), guardrail: Opt(Guardrail()), model: model() });

export const ProviderFormatList = () =>
  List(Obj({ type: OneOf(PROVIDER_FORMATS), path: Opt(LongString({ description: 'overrides the default upstream path of this format' })) }), { min: 1, max: 6 });

export const CustomProvider = () =>
  Obj({
    backendRef: Opt(LocalBackendObjectReference('same-namespace Service or InferencePool; when unset, host and port must be set')),
    formats: ProviderFormatList(),
    model: model(),
  });

/** Provider members plus host/port/path/pathPrefix, and the rules that tie them together. */
export const providerMembers = () => ({
  providerA: Opt(ProviderA()),
  providerB: Opt(ProviderB()),
  providerC: Opt(ProviderC()),
  providerD: Opt(Obj({ model: model() })),
  providerE: Opt(Obj({ model: model() })),
  providerF: Opt(ProviderF()),
  providerG: Opt(ProviderG()),
  custom: Opt(CustomProvider()),
  host: Opt(ShortString({ description: 'target host; overrides the default of managed providers' })),
  port: Opt(Port()),
  path: Opt(LongString({ description: "URL path of API requests; default the provider's own" })),
  pathPrefix: Opt(LongString({ description: 'base path prefix such as /v1 (providerA and providerD only)' })),
});

export const providerRules = (): CrossFieldRule[] => [
  {
    path: '',
    message: `exactly one of ${LLM_PROVIDERS.join(', ')} must be set`,
    cel: `${LLM_PROVIDERS.map((p) => `(has(self.${p}) ? 1 : 0)`).join(' + ')} == 1`,
    check: (s) => LLM_PROVIDERS.filter((p) => has(s, p)).length === 1,
    members: LLM_PROVIDERS,
  },
  { path: '', message: 'host and port must be set together', cel: 'has(self.host) == has(self.port)', check: (s) => has(s, 'host') === has(s, 'port') },
  { path: '', message: 'at most one of path, pathPrefix may be set', cel: '!(has(self.path) && has(self.pathPrefix))', check: (s) => !(has(s, 'path') && has(s, 'pathPrefix')), members: ['path', 'pathPrefix'] },
  {
    path: '.pathPrefix',
    message: 'pathPrefix is supported only for providerA and providerD',
    cel: '!has(self.pathPrefix) || has(self.providerA) || has(self.providerD)',
    check: (s) => !has(s, 'pathPrefix') || has(s, 'providerA') || has(s, 'providerD'),
  },
  {
    path: '',
    message: 'custom without backendRef needs host and port',
    cel: '!has(self.custom) || has(self.custom.backendRef) || (has(self.host) && has(self.port))',
    check: (s) => !has(s, 'custom') || has(s.custom, 'backendRef') || (has(s, 'host') && has(s, 'port')),
  },
];
