import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Bind } from '../ir/types.ts';
import { BindSender } from './bind-sender.ts';

const bind = (key: string, port: number): Bind => ({ key, port, protocol: 'HTTP', listeners: [] }) as unknown as Bind;

describe('BindSender: a bind equal to the one sent before at its index crosses as null', () => {
  const a = bind('a', 80);
  const b = bind('b', 81);
  const rows: { name: string; second: readonly Bind[]; full?: boolean; reset?: boolean; want: (Bind | null)[] }[] = [
    { name: 'the same objects', second: [a, b], want: [null, null] },
    { name: 'a new object with the same content', second: [bind('a', 80), b], want: [null, null] },
    { name: 'a changed bind is sent', second: [a, bind('b', 82)], want: [null, bind('b', 82)] },
    { name: 'binds that moved places are sent', second: [b, a], want: [b, a] },
    { name: 'a new bind at the end is sent', second: [a, b, bind('c', 83)], want: [null, null, bind('c', 83)] },
    { name: 'a full config sends every bind', second: [a, b], full: true, want: [a, b] },
    { name: 'after reset() every bind is sent', second: [a, b], reset: true, want: [a, b] },
  ];
  for (const row of rows) {
    it(row.name, () => {
      const sender = new BindSender();
      assert.deepEqual(sender.send([a, b], false), [a, b]);
      if (row.reset) sender.reset();
      assert.deepEqual(sender.send(row.second, row.full === true), row.want);
    });
  }
});
