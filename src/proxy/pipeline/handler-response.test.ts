import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import type { OutgoingHttpHeaders } from 'node:http';
import type { ResponseFilter } from '../policies/context.ts';
import type { DownstreamResponse } from '../http/downstream.ts';
import { HandlerResponse, type HandlerFiltering } from './handler-response.ts';

/** What the client got, through a response that applies backpressure after `capacity` writes until drained. */
class ClientResponse extends EventEmitter {
  headersSent = false;
  writableEnded = false;
  status = 0;
  head: OutgoingHttpHeaders = {};
  body = '';
  trailers: OutgoingHttpHeaders | undefined;
  destroyed = false;

  writeHead(status: number, headers: OutgoingHttpHeaders): this {
    this.status = status;
    this.head = headers;
    this.headersSent = true;
    return this;
  }

  write(chunk: Buffer): boolean {
    this.body += chunk.toString();
    return true;
  }

  end(chunk?: string | Buffer): this {
    if (chunk !== undefined) this.body += chunk.toString();
    this.writableEnded = true;
    return this;
  }

  addTrailers(headers: OutgoingHttpHeaders): void {
    this.trailers = headers;
  }

  destroy(): this {
    this.destroyed = true;
    this.emit('close');
    return this;
  }
}

async function text(body: AsyncIterable<Uint8Array>): Promise<string> {
  let out = '';
  for await (const c of body) out += Buffer.from(c).toString();
  return out;
}

/** A transformation-like body filter: the whole body, upper-cased. */
const upperCase: ResponseFilter = {
  async *body(body) {
    yield Buffer.from((await text(body)).toUpperCase());
  },
};

/** An ext_proc-like header phase: marks the head, or answers instead when the status is 500. */
const headerPhase: ResponseFilter = {
  headers(response) {
    if (response.status === 500) return { status: 403, headers: { 'content-type': 'text/plain' }, body: 'refused by the processor' };
    response.headers['x-processed'] = 'yes';
    return Promise.resolve(undefined);
  },
};

function setup(filters: ResponseFilter[], method = 'POST') {
  const client = new ClientResponse();
  const completed: { status: number; bytes: number }[] = [];
  const filtering: HandlerFiltering = { filters, method, complete: (status, bytes) => completed.push({ status, bytes }) };
  const wrapped = new HandlerResponse(client as unknown as DownstreamResponse, [], [(h) => (h['x-cors'] = 'on')], () => undefined, filtering);
  return { client, wrapped, completed };
}

const settled = () => new Promise((resolve) => setTimeout(resolve, 10));

describe('HandlerResponse: response filters on an in-process handler\'s answer', () => {
  it('a buffered answer goes through a body filter; the pipeline hears the status and bytes the client got', async () => {
    const { client, wrapped, completed } = setup([upperCase]);
    wrapped.writeHead(200, { 'content-type': 'application/json', 'content-length': '15' });
    wrapped.end(Buffer.from('{"text":"hi"}'));
    wrapped.handlerDone(200, 13);
    await settled();
    assert.equal(client.body, '{"TEXT":"HI"}');
    assert.equal(client.head['content-length'], undefined, 'the body changed: its length is not the handler\'s');
    assert.equal(client.head['x-cors'], 'on', 'response mutations still apply to the head');
    assert.deepEqual(completed, [{ status: 200, bytes: 13 }]);
  });

  it('a streamed answer written in chunks passes the filters in order, header phase first', async () => {
    const { client, wrapped, completed } = setup([headerPhase, upperCase]);
    wrapped.writeHead(200, { 'content-type': 'text/event-stream' });
    for (const part of ['data: a\n\n', 'data: b\n\n']) {
      if (!wrapped.write(Buffer.from(part))) await new Promise<void>((resolve) => wrapped.once('drain', resolve));
    }
    wrapped.end();
    await settled();
    assert.equal(client.head['x-processed'], 'yes');
    assert.equal(client.body, 'DATA: A\n\nDATA: B\n\n');
    assert.equal(wrapped.writableEnded, true);
    assert.deepEqual(completed, [{ status: 200, bytes: 18 }]);
  });

  it('a header phase that answers instead: the client gets that answer and the handler sees its client go', async () => {
    const { client, wrapped, completed } = setup([headerPhase]);
    let closed = false;
    wrapped.on('close', () => (closed = true));
    wrapped.writeHead(500, { 'content-type': 'application/json' });
    wrapped.write(Buffer.from('{"error":"provider"}'));
    await settled();
    assert.equal(client.status, 403);
    assert.equal(client.body, 'refused by the processor');
    assert.equal(closed, true, 'the handler stops its upstream work');
    wrapped.end();
    wrapped.handlerDone(499, 0);
    assert.deepEqual(completed, [{ status: 403, bytes: 0 }], 'reported once, with what the client got');
  });

  it('the gateway\'s own answers skip the filters (as the pipeline\'s errors do on a Service backend)', async () => {
    const { client, wrapped, completed } = setup([upperCase]);
    wrapped.gatewayAnswer();
    wrapped.writeHead(502, { 'content-type': 'application/json' });
    wrapped.end(Buffer.from('{"error":"could not reach the provider"}'));
    wrapped.handlerDone(502, 40);
    await settled();
    assert.equal(client.body, '{"error":"could not reach the provider"}');
    assert.equal(client.head['x-cors'], 'on', 'response mutations apply to gateway answers too');
    assert.deepEqual(completed, [{ status: 502, bytes: 40 }]);
  });

  it('a handler that stops before ending (client gone) reports its own status; the filters are cancelled', async () => {
    const { wrapped, completed } = setup([upperCase]);
    wrapped.writeHead(200, { 'content-type': 'text/event-stream' });
    wrapped.write(Buffer.from('data: a\n\n'));
    wrapped.handlerDone(499, 9);
    await settled();
    assert.deepEqual(completed, [{ status: 499, bytes: 9 }]);
  });

  it('a slow filter holds the handler back (write() false until drain) and loses nothing', async () => {
    const slow: ResponseFilter = {
      async *body(body) {
        for await (const chunk of body) {
          await new Promise((resolve) => setImmediate(resolve));
          yield chunk;
        }
      },
    };
    const { client, wrapped, completed } = setup([slow]);
    wrapped.writeHead(200, { 'content-type': 'text/event-stream' });
    let heldBack = 0;
    for (let i = 0; i < 10; i++) {
      if (!wrapped.write(Buffer.alloc(32 * 1024, 'a'))) {
        heldBack++;
        await new Promise<void>((resolve) => wrapped.once('drain', resolve));
      }
    }
    wrapped.end();
    await settled();
    await settled();
    assert.ok(heldBack > 0, 'backpressure reached the handler');
    assert.equal(client.body.length, 10 * 32 * 1024);
    assert.deepEqual(completed, [{ status: 200, bytes: 10 * 32 * 1024 }]);
  });

  it('no filters registered: the handler writes through', () => {
    const { client, wrapped, completed } = setup([]);
    wrapped.writeHead(200, { 'content-type': 'application/json' });
    wrapped.end(Buffer.from('{"a":1}'));
    wrapped.handlerDone(200, 7);
    assert.equal(client.body, '{"a":1}');
    assert.deepEqual(completed, [{ status: 200, bytes: 7 }]);
  });

  it('HEAD answers skip body filters', async () => {
    const { client, wrapped } = setup([upperCase], 'HEAD');
    wrapped.writeHead(200, { 'content-type': 'application/json' });
    wrapped.end();
    await settled();
    assert.equal(client.status, 200);
    assert.equal(client.body, '');
  });
});
