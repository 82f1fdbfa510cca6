import { test } from 'node:test';
import assert from 'node:assert/strict';
import { hostAllowed } from './allowed-hosts.ts';

const rows = [
  { name: 'exact name', host: 'a.example', allowed: ['a.example'], want: true },
  { name: 'other name', host: 'b.example', allowed: ['a.example'], want: false },
  { name: 'wildcard matches a subdomain', host: 'x.a.example', allowed: ['*.a.example'], want: true },
  { name: 'wildcard does not match its own apex', host: 'a.example', allowed: ['*.a.example'], want: false },
  { name: 'wildcard is not a plain suffix match', host: 'evila.example', allowed: ['*.a.example'], want: false },
  { name: 'star allows any name', host: 'anything.example', allowed: ['*'], want: true },
  { name: 'empty list allows nothing', host: 'a.example', allowed: [], want: false },
] as const;

for (const row of rows) test(`hostAllowed: ${row.name}`, () => assert.equal(hostAllowed(row.host, row.allowed), row.want));
