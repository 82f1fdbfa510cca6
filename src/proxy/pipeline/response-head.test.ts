import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { describe, it } from 'node:test';
import { NO_FILTERS } from '../filters/compile.ts';
import type { ResponseMutation } from '../policies/context.ts';
import { applyEffectsToFirstHead, headEnd, parseResponseHead, serializeResponseHead } from './response-head.ts';

const head = (text: string) => Buffer.from(text, 'latin1');

describe('parseResponseHead', () => {
  const rows = [
    { name: 'a 101 with its fields, names lowercased', text: 'HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n', expect: { status: 101, reason: 'Switching Protocols', headers: { upgrade: 'websocket', connection: 'Upgrade' } } },
    { name: 'a repeated field becomes a list in order', text: 'HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Bearer\r\nwww-authenticate: Basic\r\n\r\n', expect: { status: 401, reason: 'Unauthorized', headers: { 'www-authenticate': ['Bearer', 'Basic'] } } },
    { name: 'HTTP/1.0 and an empty reason', text: 'HTTP/1.0 403\r\n\r\n', expect: { status: 403, reason: '', headers: {} } },
    { name: 'obs-fold is refused', text: 'HTTP/1.1 101 OK\r\nx: a\r\n b\r\n\r\n', expect: undefined },
    { name: 'a field without a colon is refused', text: 'HTTP/1.1 101 OK\r\nbroken\r\n\r\n', expect: undefined },
    { name: 'not an HTTP/1 status line', text: 'SSH-2.0-OpenSSH\r\n\r\n', expect: undefined },
  ];
  for (const row of rows) it(row.name, () => assert.deepEqual(parseResponseHead(head(row.text)), row.expect));
});

describe('serializeResponseHead', () => {
  it('writes the status line and every value of a list', () => {
    assert.equal(serializeResponseHead({ status: 401, reason: 'Unauthorized', headers: { 'www-authenticate': ['Bearer', 'Basic'] } }).toString('latin1'), 'HTTP/1.1 401 Unauthorized\r\nwww-authenticate: Bearer\r\nwww-authenticate: Basic\r\n\r\n');
  });
  it('refuses a value that would split the head (CRLF injection), as node does', () => {
    assert.throws(() => serializeResponseHead({ status: 101, reason: 'OK', headers: { 'x-a': 'v\r\nset-cookie: s=1' } }), /Invalid character/);
  });
});

describe('headEnd', () => {
  it('is the index after the blank line, or -1', () => {
    assert.equal(headEnd(head('HTTP/1.1 101 OK\r\n\r\nframe')), 19);
    assert.equal(headEnd(head('HTTP/1.1 101 OK\r\n')), -1);
  });
});

describe('applyEffectsToFirstHead', () => {
  const setEffect: ResponseMutation = (headers, status) => {
    headers['x-effect'] = `status-${status}`;
  };
  const collect = (socket: PassThrough) => {
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    return () => Buffer.concat(chunks).toString('latin1');
  };
  const rows = [
    { name: 'one write (ws answering 101) then frames unchanged', writes: ['HTTP/1.1 101 Switching Protocols\r\nupgrade: websocket\r\n\r\n', 'frame\r\n\r\n'], end: undefined, expect: 'HTTP/1.1 101 Switching Protocols\r\nupgrade: websocket\r\nx-effect: status-101\r\n\r\nframe\r\n\r\n' },
    { name: 'a head split across writes', writes: ['HTTP/1.1 101 OK\r\nupg', 'rade: websocket\r\n', '\r\n'], end: undefined, expect: 'HTTP/1.1 101 OK\r\nupgrade: websocket\r\nx-effect: status-101\r\n\r\n' },
    { name: 'a refusal written with end(chunk), body kept', writes: [], end: 'HTTP/1.1 400 Bad Request\r\ncontent-length: 2\r\n\r\n{}', expect: 'HTTP/1.1 400 Bad Request\r\ncontent-length: 2\r\nx-effect: status-400\r\n\r\n{}' },
    { name: 'a head that does not parse goes out as written', writes: ['garbage\r\n\r\n'], end: undefined, expect: 'garbage\r\n\r\n' },
  ];
  for (const row of rows) {
    it(row.name, async () => {
      const socket = new PassThrough();
      const read = collect(socket);
      applyEffectsToFirstHead(socket, { filters: NO_FILTERS, mutations: [setEffect] });
      for (const w of row.writes) socket.write(w);
      if (row.end !== undefined) socket.end(row.end);
      else socket.end();
      await new Promise((resolve) => socket.on('end', resolve));
      assert.equal(read(), row.expect);
    });
  }
});
