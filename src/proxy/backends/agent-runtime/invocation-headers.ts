/**
 * The headers of one invocation, from the request as the route's filters and policies left it:
 * end-to-end headers pass (AgentCore hands the runtime `Authorization` and
 * `X-Amzn-Bedrock-AgentCore-Runtime-Custom-*`, and reads its own: session and user id, MCP session
 * and protocol version, trace context); the gateway owns Host, framing, the credential and the
 * SigV4 headers, so the client's are dropped before credentials are written. A request without a
 * runtime session id gets a new one (a UUID, as the AWS SDKs generate it), so the client can read
 * it from the answer and continue the session.
 */
import { randomUUID } from 'node:crypto';
import { endToEndHeaders, type HeaderMap } from '../../http/headers.ts';

export const SESSION_HEADER = 'x-amzn-bedrock-agentcore-runtime-session-id';

/** What the AWS SDKs send when the caller names no content type. */
const DEFAULT_CONTENT_TYPE = 'application/octet-stream';

export interface InvocationHeaders {
  readonly headers: HeaderMap;
  readonly sessionId: string;
}

/** `withBody`: the invocation carries a payload (content-type defaults then). */
export function invocationHeaders(request: Readonly<Record<string, string | string[]>>, withBody: boolean, newSessionId: () => string = randomUUID): InvocationHeaders {
  const headers = endToEndHeaders(request);
  delete headers['content-length'];
  // The client's credential was for the gateway; the backend's auth (SigV4, a key, passthrough) writes the runtime's.
  delete headers.authorization;
  delete headers.cookie;
  for (const name in headers) if (name.startsWith('x-amz-')) delete headers[name];
  const given = headers[SESSION_HEADER];
  const sessionId = typeof given === 'string' && given !== '' ? given : newSessionId();
  headers[SESSION_HEADER] = sessionId;
  if (withBody && headers['content-type'] === undefined) headers['content-type'] = DEFAULT_CONTENT_TYPE;
  return { headers, sessionId };
}
