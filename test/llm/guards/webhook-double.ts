/**
 * A double of a guardrail webhook speaking the public Guardrail Webhook API (agentgateway's
 * OpenAPI document, served by its reference FastAPI server): `POST /request` with
 * `GuardrailsPromptRequest` `{ body: { messages: [{ role, content }] } }` and `POST /response` with
 * `GuardrailsResponseRequest` `{ body: { choices: [{ message: { role, content } }] } }`; it answers
 * `{ action: PassAction | MaskAction | RejectAction }`. What it plays: text containing
 * "forbidden" is rejected (`{ body, status_code: 403, reason }`), a token `secret-<word>` is masked
 * to `<SECRET>` (the whole list sent back, same length), anything else passes (`{ reason: null }`).
 * A body that breaks the schema is answered 422 with FastAPI's `HTTPValidationError`.
 */
import { header, isObject, startGuardDouble, type GuardCall, type GuardDouble } from './double.ts';

const SECRET = /secret-\w+/g;

const validation = (problems: readonly string[]) => ({ status: 422, body: { detail: problems.map((msg) => ({ loc: ['body'], msg, type: 'value_error' })) } });

function judge(texts: readonly string[], rebuild: (masked: string[]) => unknown) {
  const forbidden = texts.find((t) => t.toLowerCase().includes('forbidden'));
  if (forbidden !== undefined) return { action: { body: 'Rejected by the guardrail webhook', status_code: 403, reason: 'forbidden content' } };
  if (texts.some((t) => SECRET.test(t))) {
    SECRET.lastIndex = 0;
    return { action: { body: rebuild(texts.map((t) => t.replace(SECRET, '<SECRET>'))), reason: 'masked secrets' } };
  }
  return { action: { reason: null } };
}

export async function startWebhookDouble(): Promise<GuardDouble> {
  return startGuardDouble('guardrail webhook', (call: GuardCall) => {
    const problems: string[] = [];
    if (call.method !== 'POST') problems.push('expected POST');
    if (!header(call, 'content-type')?.startsWith('application/json')) problems.push('content-type is not application/json');
    const body = isObject(call.json) ? call.json.body : undefined;
    if (!isObject(body)) return { problems: [...problems, 'no body object'], answer: { status: 200, body: {} } };
    if (call.path === '/request') {
      const messages = body.messages;
      const ok = Array.isArray(messages) && messages.every((m) => isObject(m) && typeof m.role === 'string' && typeof m.content === 'string');
      if (!ok) return { problems: [...problems, 'body.messages is not a list of { role, content } strings'], answer: { status: 200, body: {} } };
      const list = messages as { role: string; content: string }[];
      return { problems, answer: { status: 200, body: judge(list.map((m) => m.content), (masked) => ({ messages: list.map((m, i) => ({ role: m.role, content: masked[i] })) })) } };
    }
    if (call.path === '/response') {
      const choices = body.choices;
      const ok = Array.isArray(choices) && choices.every((c) => isObject(c) && isObject(c.message) && typeof c.message.role === 'string' && typeof c.message.content === 'string');
      if (!ok) return { problems: [...problems, 'body.choices is not a list of { message: { role, content } }'], answer: { status: 200, body: {} } };
      const list = choices as { message: { role: string; content: string } }[];
      return { problems, answer: { status: 200, body: judge(list.map((c) => c.message.content), (masked) => ({ choices: list.map((c, i) => ({ message: { role: c.message.role, content: masked[i] } })) })) } };
    }
    return { problems: [...problems, `unknown path ${call.path}`], answer: { status: 404, body: { detail: 'Not Found' } } };
  }, validation);
}
