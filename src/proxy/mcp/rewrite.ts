import { isNotification, isRequest, type JsonRpcId, type JsonRpcMessage } from './jsonrpc.ts';
import type { Namer } from './naming.ts';

/**
 * Rewrites between the target's view and the client's view of a message.
 *
 * Server-to-client requests (sampling, elicitation, roots, ping) of several targets share one
 * client, so their ids are made unique and routable: `sb~` + base64url(JSON [target, id]). The
 * client's answer carries that id back and names the target to forward it to. The encoding is
 * self-contained, so any replica can route the answer.
 */
const SERVER_ID_PREFIX = 'sb~';

export function encodeServerRequestId(target: string, id: JsonRpcId): string {
  return SERVER_ID_PREFIX + Buffer.from(JSON.stringify([target, id]), 'utf8').toString('base64url');
}

export function decodeServerRequestId(id: JsonRpcId | null): { target: string; id: JsonRpcId } | undefined {
  if (typeof id !== 'string' || !id.startsWith(SERVER_ID_PREFIX)) return undefined;
  try {
    const parsed: unknown = JSON.parse(Buffer.from(id.slice(SERVER_ID_PREFIX.length), 'base64url').toString('utf8'));
    if (!Array.isArray(parsed) || parsed.length !== 2 || typeof parsed[0] !== 'string') return undefined;
    const inner: unknown = parsed[1];
    return typeof inner === 'string' || typeof inner === 'number' ? { target: parsed[0], id: inner } : undefined;
  } catch {
    return undefined;
  }
}

/** Whether the client subscribed to a target's URI without the target prefix (it then gets updates in that form). */
export type PlainUriCheck = (target: string, uri: string) => boolean;

/** A message from `target` as the client must see it. */
export function toClient(target: string, message: JsonRpcMessage, namer: Namer, plain?: PlainUriCheck): JsonRpcMessage {
  if (isRequest(message)) return { ...message, id: encodeServerRequestId(target, message.id) };
  if (!isNotification(message)) return message;
  const params = message.params;
  if (message.method === 'notifications/resources/updated' && typeof params?.uri === 'string') {
    return plain?.(target, params.uri) === true ? message : { ...message, params: { ...params, uri: namer.exposeUri(target, params.uri) } };
  }
  if (message.method === 'notifications/cancelled' && params !== undefined && (typeof params.requestId === 'string' || typeof params.requestId === 'number')) {
    return { ...message, params: { ...params, requestId: encodeServerRequestId(target, params.requestId) } };
  }
  return message;
}

/**
 * Resource URIs inside results (tool results' `resource_link` and embedded `resource` content,
 * prompt messages, `resources/read` contents) are prefixed so the client can read them back
 * through the gateway. `keepUri`: the URI a client read without a prefix, which its
 * `resources/read` contents keep as the client named it.
 */
export function exposeContentUris(target: string, result: Record<string, unknown>, namer: Namer, keepUri?: string): Record<string, unknown> {
  const out: Record<string, unknown> = { ...result };
  if (Array.isArray(result.content)) out.content = result.content.map((c) => exposeContent(target, c, namer));
  if (Array.isArray(result.contents)) out.contents = result.contents.map((c) => (isRecord(c) && keepUri !== undefined && c.uri === keepUri ? c : withUri(target, c, namer)));
  if (Array.isArray(result.messages)) {
    out.messages = result.messages.map((m) => (isRecord(m) && isRecord(m.content) ? { ...m, content: exposeContent(target, m.content, namer) } : m));
  }
  return out;
}

function exposeContent(target: string, content: unknown, namer: Namer): unknown {
  if (!isRecord(content)) return content;
  if (content.type === 'resource_link') return withUri(target, content, namer);
  if (content.type === 'resource' && isRecord(content.resource)) return { ...content, resource: withUri(target, content.resource, namer) };
  return content;
}

function withUri(target: string, value: unknown, namer: Namer): unknown {
  return isRecord(value) && typeof value.uri === 'string' ? { ...value, uri: namer.exposeUri(target, value.uri) } : value;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
