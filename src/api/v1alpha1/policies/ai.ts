/** BackendAI: prompt enrichment, guards, field defaults/overrides/transformations, aliases, caching and route types. */
import { Bool, Int, List, MapOf, Obj, OneOf, Opt, Str } from '../schema/build.ts';
import { FieldDefaults, FieldTransformations, Message } from '../common/fields.ts';
import { AIPromptGuard } from './prompt-guard.ts';

export const ROUTE_TYPES = ['Completions', 'Messages', 'Models', 'Passthrough', 'Responses', 'TokenCount', 'Embeddings', 'Realtime'] as const;

export const PromptCachingConfig = () =>
  Obj({
    cacheSystem: Opt(Bool({ default: true })),
    cacheMessages: Opt(Bool({ default: true })),
    cacheTools: Opt(Bool({ default: false })),
    minTokens: Opt(Int(0, undefined, { default: 1024, description: 'estimated as word count x 1.3' })),
    cacheMessageOffset: Opt(Int(0, undefined, { default: 0, description: '0 places the cache point at the second-to-last message; higher values move it toward the start' })),
  }, { description: 'prompt caching for cloud-A-hosted providerG models of supported families' });

export const BackendAI = () =>
  Obj({
    prompt: Opt(Obj({
      prepend: Opt(List(Message())),
      append: Opt(List(Message())),
    }, { description: 'static messages added to every chat request' })),
    promptGuard: Opt(AIPromptGuard()),
    defaults: Opt(FieldDefaults('merged into the request body; fields the client set win')),
    overrides: Opt(FieldDefaults('overwrite fields of the request body')),
    transformations: Opt(FieldTransformations('CEL results overwrite fields; beat overrides for the same key')),
    finalTransformations: Opt(FieldTransformations('applied after conversion to the provider format')),
    modelAliases: Opt(MapOf(Str(1, 256), { max: 64, description: 'friendly name to provider model name' })),
    promptCaching: Opt(PromptCachingConfig()),
    routes: Opt(MapOf(OneOf(ROUTE_TYPES), { description: "path suffix (ends-with; '*' any path) to route type; default all traffic is Completions" })),
  });
