import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compilePath } from '../routing/matchers.ts';
import { redirectLocation, type RedirectFilter, type RedirectRequest } from './redirect.ts';

const base: RedirectRequest = { scheme: 'http', host: 'example.com', listenerPort: 80, path: '/a/b', query: '' };
const prefix = compilePath({ type: 'PathPrefix', value: '/a' });

describe('redirectLocation', () => {
  const cases: { name: string; filter: Omit<RedirectFilter, 'type' | 'statusCode'>; req?: Partial<RedirectRequest>; want: string }[] = [
    { name: 'scheme https drops the well-known port', filter: { scheme: 'https' }, want: 'https://example.com/a/b' },
    { name: 'scheme change ignores the listener port', filter: { scheme: 'https' }, req: { listenerPort: 8080 }, want: 'https://example.com/a/b' },
    { name: 'no scheme keeps the listener port', filter: { hostname: 'other.com' }, req: { listenerPort: 8080 }, want: 'http://other.com:8080/a/b' },
    { name: 'listener port 80 on http is omitted', filter: { hostname: 'other.com' }, want: 'http://other.com/a/b' },
    { name: 'explicit port wins', filter: { scheme: 'https', port: 8443 }, want: 'https://example.com:8443/a/b' },
    { name: 'explicit default port is omitted', filter: { scheme: 'https', port: 443 }, want: 'https://example.com/a/b' },
    { name: 'https listener on 443 stays portless', filter: { hostname: 'x.com' }, req: { scheme: 'https', listenerPort: 443 }, want: 'https://x.com/a/b' },
    { name: 'full path replacement', filter: { path: { type: 'ReplaceFullPath', value: '/new' } }, want: 'http://example.com/new' },
    { name: 'prefix replacement', filter: { path: { type: 'ReplacePrefixMatch', value: '/z' } }, want: 'http://example.com/z/b' },
    { name: 'the query string is kept', filter: {}, req: { query: 'q=1' }, want: 'http://example.com/a/b?q=1' },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const filter: RedirectFilter = { type: 'RequestRedirect', statusCode: 302, ...c.filter };
      assert.equal(redirectLocation(filter, { ...base, ...c.req }, prefix), c.want);
    });
  }
});
