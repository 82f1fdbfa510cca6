/**
 * A double of providerA's moderation endpoint (OpenAI `POST /v1/moderations`), in the API
 * reference's shapes: `{ model, input }` in (input a string, an array of strings, or an array of
 * `{type: 'text', text}` parts), `{ id, model, results: [...] }` out with one result per input, each
 * with `flagged`, `categories`, `category_scores` and `category_applied_input_types`. A missing or
 * wrong bearer key is answered 401 with OpenAI's error object, a malformed body 400.
 */
import { header, isObject, startGuardDouble, type GuardCall, type GuardDouble } from './double.ts';

const CATEGORIES = [
  'harassment', 'harassment/threatening', 'hate', 'hate/threatening', 'illicit', 'illicit/violent', 'self-harm',
  'self-harm/intent', 'self-harm/instructions', 'sexual', 'sexual/minors', 'violence', 'violence/graphic',
] as const;

/** Text containing one of these words is flagged under its category. */
const TRIGGERS: Readonly<Record<string, (typeof CATEGORIES)[number]>> = { attack: 'violence', hurt: 'harassment' };

function result(text: string) {
  const hits = new Set(Object.entries(TRIGGERS).filter(([word]) => text.toLowerCase().includes(word)).map(([, c]) => c));
  return {
    flagged: hits.size > 0,
    categories: Object.fromEntries(CATEGORIES.map((c) => [c, hits.has(c)])),
    category_scores: Object.fromEntries(CATEGORIES.map((c) => [c, hits.has(c) ? 0.97 : 0.0002])),
    category_applied_input_types: Object.fromEntries(CATEGORIES.map((c) => [c, ['text']])),
  };
}

function inputsOf(input: unknown): string[] | undefined {
  if (typeof input === 'string') return [input];
  if (!Array.isArray(input) || input.length === 0) return undefined;
  if (input.every((i) => typeof i === 'string')) return input as string[];
  if (input.every((i) => isObject(i) && i.type === 'text' && typeof i.text === 'string')) return input.map((i) => (i as { text: string }).text);
  return undefined;
}

const openAIError = (status: number, message: string, type: string, code: string | null = null) => ({ status, body: { error: { message, type, param: null, code } } });

export async function startOpenAIModerationDouble(apiKey: string, tls?: { readonly certPem: string; readonly keyPem: string }): Promise<GuardDouble> {
  return startGuardDouble('providerA moderation', (call: GuardCall) => {
    const problems: string[] = [];
    if (call.method !== 'POST' || call.path !== '/v1/moderations') problems.push('expected POST /v1/moderations');
    if (!header(call, 'content-type')?.startsWith('application/json')) problems.push('content-type is not application/json');
    if (header(call, 'authorization') !== `Bearer ${apiKey}`) {
      return { problems: [], answer: openAIError(401, 'Incorrect API key provided.', 'invalid_request_error', 'invalid_api_key') };
    }
    const body = call.json;
    if (!isObject(body)) problems.push('body is not a JSON object');
    const inputs = isObject(body) ? inputsOf(body.input) : undefined;
    if (!inputs) problems.push('input is not a string, an array of strings or of text parts');
    if (isObject(body) && body.model !== undefined && typeof body.model !== 'string') problems.push('model is not a string');
    const model = isObject(body) && typeof body.model === 'string' ? body.model : 'omni-moderation-latest';
    return { problems, answer: { status: 200, body: { id: `modr-${call.body.length}`, model, results: (inputs ?? []).map((t) => result(t)) } } };
  }, (problems) => openAIError(400, problems.join('; '), 'invalid_request_error'), tls);
}
