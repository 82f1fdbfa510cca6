/** ProxyModel (experimental, gated by proxyModels.enabled): one model, or a virtual model over others. */
import type { Static } from 'typebox';
import { List, Obj, OneOf, Opt, Str } from '../schema/build.ts';
import { exactlyOne } from '../schema/rules.ts';
import { HttpUrl, LongString, ShortString, TinyString } from '../scalars.ts';
import { HTTPHeaderFilter, LocalBackendObjectReference, ParentReference } from '../refs.ts';
import { JsonObject } from '../schema/build.ts';
import { Authorization } from '../common/authorization.ts';
import { FieldTransformations } from '../common/fields.ts';
import { ModelBackendAuth } from '../policies/auth.ts';
import { Health } from '../policies/health.ts';
import { BackendTLS, BackendTunnel } from '../policies/connection.ts';
import { AIPromptGuard } from '../policies/prompt-guard.ts';
import { CloudARegion, Guardrail, ProviderFormatList, RESOURCE_TYPES, projectNameRule } from '../backend/providers.ts';
import { VirtualModel } from './virtual-model.ts';
import { Conditions } from '../refs.ts';

/** VENDORS.md names the thirteen OpenAI-compatible vendors SPEC.md leaves out. */
export const MODEL_PROVIDERS = [
  'VendorA', 'VendorC', 'VendorD', 'VendorE', 'VendorF', 'VendorG',
  'Cohere', 'Ollama', 'Baseten', 'Cerebras', 'DeepInfra', 'DeepSeek', 'Groq', 'HuggingFace', 'Mistral', 'OpenRouter', 'TogetherAI', 'XAI', 'Fireworks',
  'Custom',
] as const;

const ModelPolicies = () =>
  Obj({
    transformations: Opt(FieldTransformations('CEL results overwrite request fields')),
    finalTransformations: Opt(FieldTransformations('applied after conversion to the provider format')),
    authorization: Opt(Authorization()),
    auth: Opt(ModelBackendAuth()),
    health: Opt(Health()),
    tls: Opt(BackendTLS()),
    tunnel: Opt(BackendTunnel()),
    headers: Opt(Obj({ request: Opt(HTTPHeaderFilter()), response: Opt(HTTPHeaderFilter()) })),
    promptGuard: Opt(AIPromptGuard()),
  });

export const ProxyModelSpec = Obj({
  parentRefs: List(ParentReference(), { min: 1, max: 16, description: 'Gateways, ListenerSets or HTTPRoutes (a rule with one ProxyModel backend named *)' }),
  match: Opt(Obj({
    model: Opt(LongString({ description: "exact, 'gpt-*', '*-latest' or '*'; default metadata.name exactly" })),
  })),
  visibility: Opt(OneOf(['Public', 'Internal'] as const, { default: 'Public', description: 'Internal models are selectable only by virtual models' })),
  provider: Opt(OneOf(MODEL_PROVIDERS)),
  providerC: Opt(Obj({
    resourceName: ShortString(),
    resourceType: OneOf(RESOURCE_TYPES),
    apiVersion: Opt(TinyString({ default: 'v1' })),
    projectName: Opt(ShortString()),
  }, { rules: [projectNameRule] })),
  providerF: Opt(JsonObject('providerF settings')),
  providerG: Opt(Obj({ region: Opt(CloudARegion()), guardrail: Opt(Guardrail()) })),
  custom: Opt(Obj({ backendRef: Opt(LocalBackendObjectReference()), formats: ProviderFormatList() })),
  baseURL: Opt(HttpUrl({ description: 'overrides provider address and base path' })),
  policies: Opt(ModelPolicies()),
  virtualModel: Opt(VirtualModel()),
}, { rules: [exactlyOne(['provider', 'virtualModel'])] });

const RouteParentStatus = () =>
  Obj({
    parentRef: ParentReference(),
    controllerName: Str(1, 253),
    conditions: Opt(Conditions(8, 1)),
  });

export const ProxyModelStatus = Obj({ parents: Opt(List(RouteParentStatus(), { max: 16, description: 'one per Gateway parent' })) });

export type ProxyModelSpec = Static<typeof ProxyModelSpec>;
export type ProxyModelStatus = Static<typeof ProxyModelStatus>;
