/**
 * The response half of an ext_proc session, as a ResponseFilter: the upstream's status and
 * headers go to the processor before anything is written to the client (it may change them or
 * answer instead), then the body flows through it in the session's body mode. Failures throw into
 * the FilteredResponseWriter: an ImmediateResponse carries its answer (`response`), a body over
 * the buffer limit its 502 (`status`), anything else becomes a 500.
 */
import type { ExtProcSession } from '../../../ext/extproc/index.ts';
import type { ResponseFilter } from '../../context.ts';
import { immediateAnswer, replaceHeaders } from './outcomes.ts';

/** HEAD answers and 204/304 carry no body: the header message ends the stream. */
function bodiless(method: string, status: number): boolean {
  return method === 'HEAD' || status === 204 || status === 304;
}

export function extProcResponseFilter(session: ExtProcSession, method: string): ResponseFilter {
  return {
    async headers(response) {
      const outcome = await session.responseHeaders(response.status, response.headers, bodiless(method, response.status));
      if (outcome.kind === 'respond') return immediateAnswer(outcome.response);
      replaceHeaders(response.headers, outcome.headers);
      return undefined;
    },
    // The writer sets `response.trailers` before the body ends; the session changes them in place.
    body: (body, response) => session.responseBody(body, () => response.trailers),
  };
}
