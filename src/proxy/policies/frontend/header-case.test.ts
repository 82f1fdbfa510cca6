import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { withRawCase } from './header-case.ts';

describe('withRawCase', () => {
  const cases: { name: string; headers: Record<string, string | string[]>; raw: Parameters<typeof withRawCase>[1]; want: Record<string, string | string[]> }[] = [
    { name: 'names take their raw spelling', headers: { 'x-a': '1', host: 'h' }, raw: ['X-A', '1', 'Host', 'h'], want: { 'X-A': '1', Host: 'h' } },
    { name: 'the first spelling wins for a repeated header', headers: { 'x-a': ['1', '2'] }, raw: ['X-a', '1', 'X-A', '2'], want: { 'X-a': ['1', '2'] } },
    { name: 'headers the gateway added stay lower-case', headers: { 'x-a': '1', 'x-forwarded-for': 'c' }, raw: ['X-A', '1'], want: { 'X-A': '1', 'x-forwarded-for': 'c' } },
    { name: 'raw Buffers (undici) work too', headers: { 'content-type': 't' }, raw: [Buffer.from('Content-Type'), Buffer.from('t')], want: { 'Content-Type': 't' } },
    { name: 'no raw headers: unchanged', headers: { 'x-a': '1' }, raw: undefined, want: { 'x-a': '1' } },
    { name: 'removed headers do not come back', headers: {}, raw: ['X-Gone', '1'], want: {} },
  ];
  for (const c of cases) it(c.name, () => assert.deepEqual(withRawCase(c.headers, c.raw), c.want));
});
