/**
 * Errors in the client's own format. Every failure a client can see, gateway-made or upstream,
 * goes through `renderError`, so an OpenAI SDK always sees `{error:{…}}` and an Anthropic SDK
 * always sees `{type:"error", error:{…}}`.
 */
import { anthropicErrorType, openAIErrorType } from '../../http/error-format.ts';

/** The wire family of error a client understands. Responses clients use the OpenAI shape. */
export type ErrorFormat = 'openai' | 'anthropic';

export interface LLMError {
  readonly status: number;
  readonly message: string;
  /** OpenAI-style type (`invalid_request_error`, …); derived from the status when absent. */
  readonly type?: string;
  readonly code?: string | null;
  readonly param?: string | null;
}

/** Thrown by converters for requests they cannot express upstream; rendered as a 4xx. */
export class TranslationError extends Error {
  readonly status: number;
  readonly param?: string;
  constructor(message: string, status = 400, param?: string) {
    super(message);
    this.name = 'TranslationError';
    this.status = status;
    this.param = param;
  }
}

// One classification for gateway-made and LLM errors alike (proxy/http/error-format.ts).
export { anthropicErrorType, openAIErrorType };

const ANTHROPIC_TYPES = new Set<string>(['invalid_request_error', 'authentication_error', 'permission_error', 'not_found_error', 'request_too_large', 'rate_limit_error', 'api_error', 'overloaded_error']);

export function errorBody(e: LLMError, format: ErrorFormat): Record<string, unknown> {
  if (format === 'anthropic') {
    const type = e.type && ANTHROPIC_TYPES.has(e.type) ? e.type : anthropicErrorType(e.status);
    return { type: 'error', error: { type, message: e.message } };
  }
  return { error: { message: e.message, type: e.type ?? openAIErrorType(e.status), param: e.param ?? null, code: e.code ?? null } };
}

export function renderError(e: LLMError, format: ErrorFormat): { status: number; headers: Record<string, string>; body: Uint8Array } {
  return {
    status: e.status,
    headers: { 'content-type': 'application/json' },
    body: Buffer.from(JSON.stringify(errorBody(e, format))),
  };
}

/**
 * Reads any provider's error body into an LLMError, keeping the upstream status: OpenAI
 * `{error:{message,type,code}}`, Anthropic `{type:"error",error:{type,message}}`, Google
 * `{error:{code,message,status}}`, Bedrock `{message}` with the type in `x-amzn-errortype`.
 */
export function parseUpstreamError(status: number, body: Uint8Array, headers: Record<string, string | string[] | undefined> = {}): LLMError {
  const text = Buffer.from(body).toString('utf8');
  let parsed: unknown;
  try { parsed = JSON.parse(text); } catch { parsed = undefined; }
  // Google wraps errors in an array on some endpoints.
  if (Array.isArray(parsed)) parsed = parsed[0];
  const obj = (parsed && typeof parsed === 'object' ? parsed : {}) as Record<string, unknown>;
  const inner = (obj.error && typeof obj.error === 'object' ? obj.error : undefined) as Record<string, unknown> | undefined;
  const message = str(inner?.message) ?? str(obj.message) ?? str(obj.Message) ?? (text.trim().slice(0, 500) || `upstream returned status ${status}`);
  const amznType = headers['x-amzn-errortype'];
  const code = str(inner?.code) ?? str(inner?.status) ?? (typeof amznType === 'string' ? amznType.split(':')[0] : undefined) ?? null;
  const type = str(inner?.type);
  return { status, message, type: type && (ANTHROPIC_TYPES.has(type) || type.endsWith('_error')) ? type : undefined, code };
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}
