import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { OutgoingHttpHeaders } from 'node:http';
import type { CompiledBackendPolicy } from '../policies/backend/compile.ts';
import type { BackendHandler, HandlerRequest } from '../backends/handlers.ts';
import type { ResponseFilter, ResponseMutation } from '../policies/context.ts';
import type { RequestPolicyContext } from '../policies/request-context.ts';
import type { DownstreamRequest, DownstreamResponse } from '../http/downstream.ts';
import type { Forward } from './exchange.ts';
import { dispatchToHandler } from './handler-dispatch.ts';

/** The head the client got. */
function recordingResponse(): { res: DownstreamResponse; head: () => OutgoingHttpHeaders | undefined } {
  let head: OutgoingHttpHeaders | undefined;
  const res = {
    headersSent: false,
    writableEnded: false,
    writeHead(_status: number, headers: OutgoingHttpHeaders) {
      head = headers;
      return res;
    },
    write: () => true,
    end: () => res,
    addTrailers: () => undefined,
    destroy: () => res,
    once: () => res,
    on: () => res,
  };
  return { res: res as unknown as DownstreamResponse, head: () => head };
}

/**
 * A handler that runs the backend policy's request steps the way the LLM gateway does: a step adds
 * a response effect (extAuth's response header) to the request's context, then the answer is written.
 */
function handlerAddingEffect(mutation: ResponseMutation): BackendHandler {
  return {
    handle(_req, res, request: HandlerRequest) {
      (request.policy as RequestPolicyContext).responseMutations.push(mutation);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{}');
      request.done(200, 2);
    },
    close: () => Promise.resolve(),
  };
}

/** Only what dispatchToHandler reads of a Forward (the fixture is partial on purpose). */
function forward(handler: BackendHandler, backendRuntime: Partial<CompiledBackendPolicy> | undefined): Forward {
  return {
    backend: { key: 'backend/default/ai', handler },
    rule: {},
    traffic: undefined,
    filters: { responseHeaders: [] },
    labels: {},
    path: '/v1/chat/completions',
    headers: {},
    backendPolicy: undefined,
    backendRuntime,
    clientFormat: () => 'gateway',
  } as never;
}

const addHeader: ResponseMutation = (headers) => {
  headers['x-authz-result'] = 'allowed';
};

describe('dispatchToHandler: response effects the backend policy adds while the handler runs', () => {
  const cases: readonly { name: string; runtime: Partial<CompiledBackendPolicy> | undefined; expected: string | undefined }[] = [
    // compileBackendPolicy sets addsResponseEffects for extAuth or a transformation, on the backend or on one of its providers/targets.
    { name: 'backend extAuth or transformation with no other response effect on the route', runtime: { addsResponseEffects: true }, expected: 'allowed' },
    // No request steps: nothing can add an effect later, so the handler writes to the client directly (no wrapper to apply one).
    { name: 'no backend request steps: the handler writes directly', runtime: undefined, expected: undefined },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const { res, head } = recordingResponse();
      const context = { responseMutations: [] as ResponseMutation[], responseFilters: [], upstream: { delayedMs: 0 } } as unknown as RequestPolicyContext;
      let status = 0;
      dispatchToHandler({ headers: {} } as DownstreamRequest, res, forward(handlerAddingEffect(addHeader), c.runtime), (s) => (status = s), context);
      assert.equal(status, 200);
      assert.equal(head()?.['x-authz-result'], c.expected);
    });
  }
});

/** A handler answering `{"text":"hi"}` in one go, as the LLM handler's buffered answers are written. */
function answering(filtersResponses: boolean | undefined): BackendHandler {
  return {
    ...(filtersResponses === undefined ? {} : { filtersResponses }),
    handle(_req, res, request: HandlerRequest) {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '13' });
      res.end('{"text":"hi"}');
      request.done(200, 13);
    },
    close: () => Promise.resolve(),
  };
}

const upperCase: ResponseFilter = {
  async *body(body) {
    let all = '';
    for await (const c of body) all += Buffer.from(c).toString();
    yield Buffer.from(all.toUpperCase());
  },
};

describe('dispatchToHandler: response filters on handlers that take them', () => {
  const cases: readonly { name: string; filtersResponses: boolean | undefined; body: string }[] = [
    { name: 'a handler that takes them (ai): its answer passes the body filter', filtersResponses: true, body: '{"TEXT":"HI"}' },
    { name: 'a handler that does not: its answer goes out as written', filtersResponses: undefined, body: '{"text":"hi"}' },
  ];
  for (const c of cases) {
    it(c.name, async () => {
      let body = '';
      const { res } = recordingResponse();
      (res as { write: (chunk: Buffer) => boolean }).write = (chunk) => {
        body += chunk.toString();
        return true;
      };
      (res as { end: (chunk?: string | Buffer) => unknown }).end = (chunk) => (body += chunk?.toString() ?? '');
      const context = { responseMutations: [] as ResponseMutation[], responseFilters: [upperCase], upstream: { delayedMs: 0 } } as unknown as RequestPolicyContext;
      const done = new Promise<number>((resolve) => {
        dispatchToHandler({ method: 'POST', headers: {} } as DownstreamRequest, res, forward(answering(c.filtersResponses), undefined), (s) => resolve(s), context);
      });
      assert.equal(await done, 200);
      assert.equal(body, c.body);
    });
  }
});
