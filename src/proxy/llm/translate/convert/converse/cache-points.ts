/**
 * Bedrock prompt caching: `cachePoint` blocks placed as `ai.promptCaching` says. Only model
 * families that accept cache points get them; for others a cache point is a validation error.
 */
import type { PromptCachingConfig } from '../../config.ts';
import type { ConverseRequest } from '../../formats/bedrock.ts';

const CACHE_POINT = { cachePoint: { type: 'default' as const } };
/** Bedrock model ids (optionally with a cross-region prefix such as `us.`) that support cache points. */
const SUPPORTED = /(^|\.)(anthropic\.claude|amazon\.nova)/;

export function supportsCachePoints(modelId: string): boolean {
  return SUPPORTED.test(modelId);
}

/** SPEC.md's estimate: word count × 1.3. */
function estimateTokens(body: ConverseRequest): number {
  let words = 0;
  const count = (t: string) => { words += t.split(/\s+/).filter(Boolean).length; };
  for (const s of body.system ?? []) if ('text' in s) count(s.text);
  for (const m of body.messages) for (const b of m.content) if ('text' in b) count(b.text);
  return words * 1.3;
}

export function applyCachePoints(body: ConverseRequest, cfg: PromptCachingConfig, modelId: string): ConverseRequest {
  if (!supportsCachePoints(modelId) || estimateTokens(body) < (cfg.minTokens ?? 1024)) return body;
  const out: ConverseRequest = { ...body };
  if ((cfg.cacheSystem ?? true) && out.system?.length && !('cachePoint' in out.system[out.system.length - 1])) {
    out.system = [...out.system, CACHE_POINT];
  }
  if ((cfg.cacheMessages ?? true) && out.messages.length > 0) {
    // Offset 0 caches through the second-to-last message (the prefix the next turn will repeat).
    const index = Math.min(out.messages.length - 1, Math.max(0, out.messages.length - 2 - (cfg.cacheMessageOffset ?? 0)));
    out.messages = out.messages.map((m, i) => (i === index ? { ...m, content: [...m.content, CACHE_POINT] } : m));
  }
  if (cfg.cacheTools && out.toolConfig?.tools.length) {
    out.toolConfig = { ...out.toolConfig, tools: [...out.toolConfig.tools, CACHE_POINT] };
  }
  return out;
}
