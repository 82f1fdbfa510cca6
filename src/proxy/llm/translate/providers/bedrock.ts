/**
 * providerG: AWS Bedrock Converse (SigV4 signed by the runtime; tool names sanitised by the
 * converter); embeddings through InvokeModel (Titan, Cohere Embed), rerank through the Agent
 * Runtime's `Rerank` API on its own host (signed for service `bedrock` too).
 */
import type { BedrockConfig, LLMProvider } from '../config.ts';
import { managedTarget, modelSegment } from './paths.ts';
import type { ProviderEndpoint, ProviderModule } from './types.ts';
import type { ConverseRequest } from '../formats/bedrock.ts';
import { applyCachePoints } from '../convert/converse/cache-points.ts';
import { bedrockEmbeddings, bedrockRerank } from './conversions.ts';

export const DEFAULT_REGION = 'us-east-1';

export const bedrock: ProviderModule<BedrockConfig> = {
  token: 'providerG',
  config: (p) => (p as Extract<LLMProvider, { providerG: unknown }>).providerG,
  target: (p, c) => managedTarget(`bedrock-runtime.${c.region ?? DEFAULT_REGION}.amazonaws.com`, p),
  endpoint(p, c, q): ProviderEndpoint | undefined {
    const credential = { kind: 'sigv4', service: 'bedrock', region: c.region ?? DEFAULT_REGION } as const;
    const base = `/model/${modelSegment(q.model)}`;
    if (q.route === 'Completions' || q.route === 'Messages' || q.route === 'Responses') {
      return { format: 'converse', path: p.path ?? `${base}/${q.stream ? 'converse-stream' : 'converse'}`, headers: {}, credential, modelInPath: true };
    }
    if (q.route === 'TokenCount') return { format: 'converse_count_tokens', path: `${base}/count-tokens`, headers: {}, credential, modelInPath: true };
    if (q.route === 'Embeddings') {
      const conversion = bedrockEmbeddings(q.model);
      if (!conversion) return undefined;
      return { format: 'bedrock_invoke_embeddings', path: `${base}/invoke`, headers: { accept: 'application/json' }, credential, modelInPath: true, conversion };
    }
    if (q.route === 'Rerank') {
      const region = c.region ?? DEFAULT_REGION;
      return { format: 'bedrock_rerank', path: '/rerank', headers: {}, credential, target: managedTarget(`bedrock-agent-runtime.${region}.amazonaws.com`, p), conversion: bedrockRerank(region) };
    }
    return undefined;
  },
  finalizeBody(c, format, body, q) {
    if (format !== 'converse') return body;
    let out = q.promptCaching ? applyCachePoints(body as ConverseRequest, q.promptCaching, q.model) as Record<string, unknown> : body;
    if (c.guardrail) out = { ...out, guardrailConfig: { guardrailIdentifier: c.guardrail.identifier, guardrailVersion: c.guardrail.version } };
    return out;
  },
};
