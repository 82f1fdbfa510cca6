/**
 * A double of cloud-C Model Armor's template sanitize calls, in the API reference's shapes:
 * `POST /v1/projects/{p}/locations/{l}/templates/{t}:sanitizeUserPrompt` with
 * `{ userPromptData: { text } }`, `…:sanitizeModelResponse` with `{ modelResponseData: { text } }`;
 * out `{ sanitizationResult: { filterMatchState, filterResults, invocationResult, sanitizationMetadata } }`.
 * Its template matches prompt injection ("ignore previous instructions") on prompts and the
 * responsible-AI dangerous filter ("build a bomb") on both. A call without the expected cloud-C
 * access token is answered 401 UNAUTHENTICATED, a malformed one 400 INVALID_ARGUMENT, an unknown
 * template 404 NOT_FOUND — Google's error object each time.
 */
import { header, isObject, startGuardDouble, type DoubleAnswer, type GuardCall, type GuardDouble } from './double.ts';

export interface ModelArmorDoubleOptions {
  readonly projectId: string;
  readonly location: string;
  readonly templateId: string;
  readonly accessToken: string;
}

const googleError = (code: number, status: string, message: string): DoubleAnswer => ({ status: code, body: { error: { code, message, status } } });

const state = (matched: boolean) => (matched ? 'MATCH_FOUND' : 'NO_MATCH_FOUND');

function sanitize(text: string, prompt: boolean) {
  const lower = text.toLowerCase();
  const injection = prompt && lower.includes('ignore previous instructions');
  const dangerous = lower.includes('build a bomb');
  const filterResults = {
    csam: { csamFilterFilterResult: { executionState: 'EXECUTION_SUCCESS', matchState: 'NO_MATCH_FOUND' } },
    malicious_uris: { maliciousUriFilterResult: { executionState: 'EXECUTION_SUCCESS', matchState: 'NO_MATCH_FOUND' } },
    rai: {
      raiFilterResult: {
        executionState: 'EXECUTION_SUCCESS', matchState: state(dangerous),
        raiFilterTypeResults: {
          dangerous: { confidenceLevel: dangerous ? 'HIGH' : 'LOW_AND_ABOVE', matchState: state(dangerous) },
          harassment: { matchState: 'NO_MATCH_FOUND' }, hate_speech: { matchState: 'NO_MATCH_FOUND' }, sexually_explicit: { matchState: 'NO_MATCH_FOUND' },
        },
      },
    },
    ...(prompt ? { pi_and_jailbreak: { piAndJailbreakFilterResult: { executionState: 'EXECUTION_SUCCESS', matchState: state(injection), ...(injection ? { confidenceLevel: 'HIGH' } : {}) } } } : {}),
    sdp: { sdpFilterResult: { inspectResult: { executionState: 'EXECUTION_SUCCESS', matchState: 'NO_MATCH_FOUND' } } },
  };
  return { sanitizationResult: { filterMatchState: state(injection || dangerous), filterResults, invocationResult: 'SUCCESS', sanitizationMetadata: {} } };
}

export async function startModelArmorDouble(opts: ModelArmorDoubleOptions): Promise<GuardDouble> {
  const template = `/v1/projects/${opts.projectId}/locations/${opts.location}/templates/${opts.templateId}`;
  return startGuardDouble('cloud-C Model Armor', (call: GuardCall) => {
    if (header(call, 'authorization') !== `Bearer ${opts.accessToken}`) {
      return { problems: [], answer: googleError(401, 'UNAUTHENTICATED', 'Request had invalid authentication credentials.') };
    }
    const prompt = call.path === `${template}:sanitizeUserPrompt`;
    if (!prompt && call.path !== `${template}:sanitizeModelResponse`) return { problems: [], answer: googleError(404, 'NOT_FOUND', `Template ${call.path} not found.`) };
    const problems: string[] = [];
    if (call.method !== 'POST') problems.push('expected POST');
    if (!header(call, 'content-type')?.startsWith('application/json')) problems.push('content-type is not application/json');
    const body = call.json;
    const data = isObject(body) ? (prompt ? body.userPromptData : body.modelResponseData) : undefined;
    const text = isObject(data) ? data.text : undefined;
    if (typeof text !== 'string' || text === '') problems.push(`${prompt ? 'userPromptData' : 'modelResponseData'}.text is not a non-empty string`);
    if (isObject(body) && prompt && body.modelResponseData !== undefined) problems.push('a prompt call carries modelResponseData');
    return { problems, answer: { status: 200, body: sanitize(String(text), prompt) } };
  }, (problems) => googleError(400, 'INVALID_ARGUMENT', problems.join('; ')));
}
