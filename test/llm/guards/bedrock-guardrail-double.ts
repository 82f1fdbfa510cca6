/**
 * A double of cloud-A Bedrock's ApplyGuardrail API
 * (`POST /guardrail/{guardrailIdentifier}/version/{guardrailVersion}/apply`), in the API
 * reference's shapes: `{ source: INPUT|OUTPUT, content: [{ text: { text } }] }` in; out
 * `{ usage, action: NONE|GUARDRAIL_INTERVENED, actionReason, outputs, assessments, guardrailCoverage }`.
 * The guardrail it plays has a denied topic (text mentioning "investment advice" is BLOCKED, one
 * output with the blocked message) and a PII filter that ANONYMIZES US social security numbers
 * (`{US_SOCIAL_SECURITY_NUMBER}`, one output per content block). Every call must be SigV4-signed
 * for service `bedrock` in the guardrail's region with the test keys, or carry the Bedrock API key
 * as a bearer token; otherwise 403 as AWS answers.
 */
import { verifySigV4, type FakeSts } from '../fake-sts.ts';
import { header, isObject, startGuardDouble, type DoubleAnswer, type GuardCall, type GuardDouble } from './double.ts';

export interface BedrockGuardrailDoubleOptions {
  readonly identifier: string;
  readonly version: string;
  readonly region: string;
  /** Access key id → secret key the double accepts signatures from. */
  readonly keys?: Readonly<Record<string, string>>;
  /** A Bedrock API key accepted as `Authorization: Bearer`. */
  readonly apiKey?: string;
  /** Sessions this STS handed out are accepted too (signature and session token checked). */
  readonly sts?: FakeSts;
}

const SSN = /\b\d{3}-\d{2}-\d{4}\b/g;
const BLOCKED_MESSAGE = 'Sorry, the model cannot answer this question.';

const awsError = (status: number, type: string, message: string): DoubleAnswer => ({ status, body: { message, __type: type } });

function apply(source: string, texts: readonly string[]) {
  const usage = { topicPolicyUnits: texts.length, contentPolicyUnits: texts.length, wordPolicyUnits: 0, sensitiveInformationPolicyUnits: texts.length, sensitiveInformationPolicyFreeUnits: 0, contextualGroundingPolicyUnits: 0 };
  const coverage = { textCharacters: { guarded: texts.join('').length, total: texts.join('').length } };
  const topic = texts.some((t) => t.toLowerCase().includes('investment advice'));
  const ssns = texts.flatMap((t) => t.match(SSN) ?? []);
  if (topic) {
    return {
      usage, action: 'GUARDRAIL_INTERVENED', actionReason: `Guardrail blocked (${source}).`,
      outputs: [{ text: BLOCKED_MESSAGE }],
      assessments: [{ topicPolicy: { topics: [{ name: 'Investment advice', type: 'DENY', action: 'BLOCKED', detected: true }] }, invocationMetrics: { guardrailProcessingLatency: 12 } }],
      guardrailCoverage: coverage,
    };
  }
  if (ssns.length > 0) {
    return {
      usage, action: 'GUARDRAIL_INTERVENED', actionReason: 'Guardrail masked.',
      outputs: texts.map((t) => ({ text: t.replace(SSN, '{US_SOCIAL_SECURITY_NUMBER}') })),
      assessments: [{ sensitiveInformationPolicy: { piiEntities: ssns.map((match) => ({ match, type: 'US_SOCIAL_SECURITY_NUMBER', action: 'ANONYMIZED', detected: true })) }, invocationMetrics: { guardrailProcessingLatency: 9 } }],
      guardrailCoverage: coverage,
    };
  }
  return { usage, action: 'NONE', actionReason: 'No action.', outputs: [], assessments: [{ invocationMetrics: { guardrailProcessingLatency: 5 } }], guardrailCoverage: coverage };
}

export async function startBedrockGuardrailDouble(opts: BedrockGuardrailDoubleOptions): Promise<GuardDouble> {
  const expectedPath = `/guardrail/${encodeURIComponent(opts.identifier)}/version/${encodeURIComponent(opts.version)}/apply`;
  return startGuardDouble('cloud-A ApplyGuardrail', (call: GuardCall) => {
    const problems: string[] = [];
    if (call.method !== 'POST') problems.push('expected POST');
    if (call.path !== expectedPath) {
      return { problems: [], answer: awsError(404, 'ResourceNotFoundException', `The guardrail at ${call.path} was not found.`) };
    }
    const bearer = header(call, 'authorization');
    const byKey = opts.apiKey !== undefined && bearer === `Bearer ${opts.apiKey}`;
    if (!byKey) {
      const scope = { service: 'bedrock', region: opts.region };
      const session = call.headers['x-amz-security-token'] !== undefined && opts.sts ? opts.sts.verifySession(call, scope) : undefined;
      const signed = session ?? verifySigV4(call, scope, (id) => opts.keys?.[id]);
      if (!signed.ok) return { problems: [], answer: awsError(403, 'UnrecognizedClientException', `The security token included in the request is invalid (${signed.reason}).`) };
    }
    if (!header(call, 'content-type')?.startsWith('application/json')) problems.push('content-type is not application/json');
    const body = call.json;
    const source = isObject(body) ? body.source : undefined;
    if (source !== 'INPUT' && source !== 'OUTPUT') problems.push('source is not INPUT or OUTPUT');
    const content = isObject(body) ? body.content : undefined;
    const texts: string[] = [];
    if (!Array.isArray(content) || content.length === 0) problems.push('content is not a non-empty array');
    else {
      for (const block of content) {
        const text = isObject(block) && isObject(block.text) ? block.text.text : undefined;
        if (typeof text !== 'string' || text.length === 0) problems.push('a content block is not { text: { text: <1+ characters> } }');
        else texts.push(text);
      }
    }
    return { problems, answer: { status: 200, body: apply(String(source), texts) } };
  }, (problems) => awsError(400, 'ValidationException', problems.join('; ')));
}
