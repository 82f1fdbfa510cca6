/**
 * A target's own response header changes (`transformation.response` set/add/remove and extAuth
 * response headers of a ProxyPolicy whose sectionName names the target) on the client's HTTP
 * answer, when that answer is one target's alone: a POST carrying one JSON-RPC request that the
 * multiplexer routes to one target (docs/mcp.md "Target backend policies"). They join the
 * request's response effects, as the route's backend steps run inside the handler do: the
 * pipeline applies the list when the head goes out, after the route's own effects (the order a
 * Service backend's policy effects have), to a JSON answer and an SSE head alike. The pipeline
 * wraps the response whenever a target's steps add effects (`addsResponseEffects` counts the
 * targets', pipeline/handler-dispatch.ts), so they are never dropped for want of a wrapper.
 */
import type { Logger } from '../../../common/logger.ts';
import type { UpstreamContext } from '../upstream/policy.ts';
import type { AnswerHeaders } from '../upstream/target-gate.ts';
import { isRequest, type JsonRpcMessage } from '../jsonrpc.ts';
import type { DownstreamResponse } from './io.ts';

/**
 * Where the routed target's header changes go for a POST whose answer is one request's
 * (`messages`: the POST's, absent when the transport takes one request per POST); undefined when
 * no target has steps of its own (nothing to do, nothing allocated) or the answer is shared
 * (several requests in a batch).
 */
export function answerHeadersOf(res: DownstreamResponse, upstream: UpstreamContext, logger: Logger, messages?: readonly JsonRpcMessage[]): AnswerHeaders | undefined {
  const effects = upstream.policy?.responseMutations;
  if (upstream.gates === undefined || effects === undefined || (messages !== undefined && !oneRequest(messages))) return undefined;
  return (changes) => {
    // The head already left (an SSE answer a target lookup streamed into before the routed call's steps ran).
    if (res.headersSent) {
      logger.debug({ changes: changes.length }, 'MCP: a target\'s response header changes came after the answer\'s head; not applied');
      return;
    }
    effects.push(...changes);
  };
}

/** One request among the POST's messages (notifications and answers alongside it get no response). */
function oneRequest(messages: readonly JsonRpcMessage[]): boolean {
  let requests = 0;
  for (const message of messages) if (isRequest(message) && ++requests > 1) return false;
  return requests === 1;
}
