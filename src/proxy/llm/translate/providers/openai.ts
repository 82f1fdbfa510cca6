/** providerA: OpenAI. Chat completions, Responses and embeddings natively; Messages clients are translated to chat. */
import type { LLMProvider, OpenAIConfig } from '../config.ts';
import type { OpenAIModeration } from '../../../../ir/ai.ts';
import { BEARER, joinPath, managedTarget, OPENAI_SUFFIX } from './paths.ts';
import type { ProviderModule, UpstreamFormat } from './types.ts';

/** SPEC.md: `moderation.model` defaults to omni-moderation-latest. */
export const DEFAULT_MODERATION_MODEL = 'omni-moderation-latest';

/** The wire shape of OpenAI's inline `moderation` request parameter (chat completions and Responses). */
export interface ModerationParameter {
  readonly model: string;
  readonly policy?: { input?: { mode: 'score' | 'block' }; output?: { mode: 'score' | 'block' } };
}

/** The formats whose request body takes `moderation` (OpenAI's chat completions and Responses APIs). */
const MODERATED_FORMATS: ReadonlySet<UpstreamFormat> = new Set(['chat', 'responses']);

/** Built once per provider config (the IR is immutable), so a moderated request costs one object spread. */
const parameters = new WeakMap<OpenAIModeration, ModerationParameter>();

/** `providerA.moderation` as OpenAI's `moderation` parameter: Score → `score`, Block → `block`. */
export function moderationParameter(m: OpenAIModeration): ModerationParameter {
  let param = parameters.get(m);
  if (param === undefined) {
    const mode = (side: { readonly mode: 'Score' | 'Block' } | undefined) => (side ? { mode: side.mode === 'Block' ? 'block' as const : 'score' as const } : undefined);
    const input = mode(m.policy?.input);
    const output = mode(m.policy?.output);
    const policy = input || output ? { ...(input ? { input } : {}), ...(output ? { output } : {}) } : undefined;
    param = { model: m.model ?? DEFAULT_MODERATION_MODEL, ...(policy ? { policy } : {}) };
    parameters.set(m, param);
  }
  return param;
}

export const openai: ProviderModule<OpenAIConfig> = {
  token: 'providerA',
  config: (p) => (p as Extract<LLMProvider, { providerA: unknown }>).providerA,
  target: (p) => managedTarget('api.openai.com', p),
  endpoint(p, _c, q) {
    const route = OPENAI_SUFFIX[q.route];
    if (!route) return undefined;
    const prefix = p.pathPrefix ?? '/v1';
    // `path` replaces the provider's own path for the generation routes.
    const path = p.path && route.format !== 'embeddings' ? p.path : joinPath(prefix, route.suffix);
    return { format: route.format, path, headers: {}, credential: BEARER };
  },
  /**
   * `moderation` set: the operator's inline moderation parameter replaces whatever the client sent
   * (a client must not switch a Block policy off). Unset: the body is left alone (SPEC.md: not injected).
   */
  finalizeBody(c, format, body) {
    if (c.moderation === undefined || !MODERATED_FORMATS.has(format)) return body;
    return { ...body, moderation: moderationParameter(c.moderation) };
  },
};
