import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Route, RouteAttachment, RouteMatch } from '../../ir/types.ts';
import type { RequestView } from './matchers.ts';
import { attachmentEntries, RouteTable, type RouteTableSource } from './route-table.ts';

interface RouteSpec {
  readonly key: string;
  readonly created?: string;
  readonly hostnames?: readonly string[];
  /** One rule per entry, each with its matches. */
  readonly rules: readonly (readonly RouteMatch[])[];
}

/** Builds a table whose payload is the rule key, so tests can assert which rule won. */
function table(specs: readonly RouteSpec[]): { table: RouteTable<string>; errors: string[] } {
  const errors: string[] = [];
  return { table: new RouteTable<string>(source(specs, errors)), errors };
}

function source(specs: readonly RouteSpec[], errors: string[]): RouteTableSource<string> {
  const routes: Record<string, Route> = {};
  const attachments: RouteAttachment[] = [];
  for (const s of specs) {
    const [namespace, name] = s.key.split('/');
    routes[s.key] = {
      key: s.key,
      namespace,
      name,
      creationTimestamp: s.created ?? '2024-01-01T00:00:00Z',
      rules: s.rules.map((matches, i) => ({ key: `${s.key}/rule/${i}`, matches, filters: [], backends: [] })),
    };
    attachments.push({ routeKey: s.key, hostnames: s.hostnames ?? [] });
  }
  return { attachments, routes, ruleOf: (route, i) => route.rules[i].key, onError: (m) => errors.push(m) };
}

function req(path: string, extra: Partial<RequestView> = {}): RequestView {
  const q = path.indexOf('?');
  return { path: q < 0 ? path : path.slice(0, q), query: q < 0 ? '' : path.slice(q + 1), method: 'GET', headers: {}, ...extra };
}

describe('RouteTable path matching', () => {
  const cases = [
    { name: 'prefix matches itself', match: { path: { type: 'PathPrefix', value: '/foo' } }, path: '/foo', want: true },
    { name: 'prefix matches below a segment', match: { path: { type: 'PathPrefix', value: '/foo' } }, path: '/foo/bar', want: true },
    { name: 'prefix never matches mid-segment', match: { path: { type: 'PathPrefix', value: '/foo' } }, path: '/foobar', want: false },
    { name: 'a trailing slash in the prefix is ignored', match: { path: { type: 'PathPrefix', value: '/foo/' } }, path: '/foo', want: true },
    { name: 'prefix / matches everything', match: { path: { type: 'PathPrefix', value: '/' } }, path: '/anything/at/all', want: true },
    { name: 'exact needs the whole path', match: { path: { type: 'Exact', value: '/foo' } }, path: '/foo/', want: false },
    { name: 'exact ignores the query', match: { path: { type: 'Exact', value: '/foo' } }, path: '/foo?a=1', want: true },
    { name: 'regex must match the whole path', match: { path: { type: 'RegularExpression', value: '/v[0-9]+' } }, path: '/v12/x', want: false },
    { name: 'regex full match', match: { path: { type: 'RegularExpression', value: '/v[0-9]+/.*' } }, path: '/v12/x', want: true },
    { name: 'method must agree', match: { method: 'POST' }, path: '/', want: false },
    { name: 'header exact', match: { headers: [{ type: 'Exact', name: 'X-Env', value: 'prod' }] }, path: '/', headers: { 'x-env': 'prod' }, want: true },
    { name: 'header regex', match: { headers: [{ type: 'RegularExpression', name: 'x-env', value: 'pr.d' }] }, path: '/', headers: { 'x-env': 'prod' }, want: true },
    { name: 'missing header fails', match: { headers: [{ type: 'Exact', name: 'x-env', value: 'prod' }] }, path: '/', want: false },
    { name: 'query exact, first value counts', match: { queryParams: [{ type: 'Exact', name: 'v', value: '1' }] }, path: '/?v=1&v=2', want: true },
    { name: 'query names are case-sensitive', match: { queryParams: [{ type: 'Exact', name: 'V', value: '1' }] }, path: '/?v=1', want: false },
  ] as const;
  for (const c of cases) {
    it(c.name, () => {
      const { table: t } = table([{ key: 'ns/r', rules: [[c.match as RouteMatch]] }]);
      const headers = 'headers' in c ? c.headers : {};
      assert.equal(t.match('example.com', req(c.path, { headers })) !== undefined, c.want);
    });
  }
});

describe('RouteTable precedence', () => {
  const cases: { name: string; routes: RouteSpec[]; request: RequestView; host?: string; want: string }[] = [
    {
      name: 'Exact beats PathPrefix',
      routes: [{ key: 'ns/a', rules: [[{ path: { type: 'PathPrefix', value: '/foo' } }]] }, { key: 'ns/b', rules: [[{ path: { type: 'Exact', value: '/foo' } }]] }],
      request: req('/foo'),
      want: 'ns/b/rule/0',
    },
    {
      name: 'longest prefix wins',
      routes: [{ key: 'ns/a', rules: [[{ path: { type: 'PathPrefix', value: '/foo' } }], [{ path: { type: 'PathPrefix', value: '/foo/bar' } }]] }],
      request: req('/foo/bar/baz'),
      want: 'ns/a/rule/1',
    },
    {
      name: 'RegularExpression beats a catch-all PathPrefix /',
      routes: [{ key: 'ns/a', rules: [[{ path: { type: 'PathPrefix', value: '/' } }], [{ path: { type: 'RegularExpression', value: '/foo.*' } }]] }],
      request: req('/foo'),
      want: 'ns/a/rule/1',
    },
    {
      name: 'RegularExpression beats a longer PathPrefix',
      routes: [{ key: 'ns/a', rules: [[{ path: { type: 'PathPrefix', value: '/v1/chat/completions' } }], [{ path: { type: 'RegularExpression', value: '/v[0-9]/.*' } }]] }],
      request: req('/v1/chat/completions'),
      want: 'ns/a/rule/1',
    },
    {
      name: 'Exact beats RegularExpression',
      routes: [{ key: 'ns/a', rules: [[{ path: { type: 'RegularExpression', value: '/foo.*' } }], [{ path: { type: 'Exact', value: '/foo' } }]] }],
      request: req('/foo'),
      want: 'ns/a/rule/1',
    },
    {
      name: 'the longer pattern wins among regular expressions',
      routes: [{ key: 'ns/a', rules: [[{ path: { type: 'RegularExpression', value: '/.*' } }], [{ path: { type: 'RegularExpression', value: '/api/.*' } }]] }],
      request: req('/api/x'),
      want: 'ns/a/rule/1',
    },
    {
      name: 'a PathPrefix still serves what no regex matches',
      routes: [{ key: 'ns/a', rules: [[{ path: { type: 'PathPrefix', value: '/' } }], [{ path: { type: 'RegularExpression', value: '/foo.*' } }]] }],
      request: req('/bar'),
      want: 'ns/a/rule/0',
    },
    {
      name: 'a method match beats none',
      routes: [{ key: 'ns/a', rules: [[{}], [{ method: 'GET' }]] }],
      request: req('/x'),
      want: 'ns/a/rule/1',
    },
    {
      name: 'more header matches win',
      routes: [{ key: 'ns/a', rules: [[{ headers: [{ type: 'Exact', name: 'a', value: '1' }] }], [{ headers: [{ type: 'Exact', name: 'a', value: '1' }, { type: 'Exact', name: 'b', value: '2' }] }]] }],
      request: req('/', { headers: { a: '1', b: '2' } }),
      want: 'ns/a/rule/1',
    },
    {
      name: 'more query matches win',
      routes: [{ key: 'ns/a', rules: [[{}], [{ queryParams: [{ type: 'Exact', name: 'q', value: '1' }] }]] }],
      request: req('/?q=1'),
      want: 'ns/a/rule/1',
    },
    {
      name: 'the oldest route wins a tie',
      routes: [{ key: 'ns/a', created: '2024-05-01T00:00:00Z', rules: [[{}]] }, { key: 'ns/b', created: '2023-05-01T00:00:00Z', rules: [[{}]] }],
      request: req('/'),
      want: 'ns/b/rule/0',
    },
    {
      name: 'then namespace/name alphabetically',
      routes: [{ key: 'ns/b', rules: [[{}]] }, { key: 'ns/a', rules: [[{}]] }],
      request: req('/'),
      want: 'ns/a/rule/0',
    },
    {
      name: 'then rule order',
      routes: [{ key: 'ns/a', rules: [[{}], [{}]] }],
      request: req('/'),
      want: 'ns/a/rule/0',
    },
    {
      name: 'an exact hostname beats a more specific path on a wildcard',
      routes: [
        { key: 'ns/wild', hostnames: ['*.example.com'], rules: [[{ path: { type: 'Exact', value: '/x' } }]] },
        { key: 'ns/exact', hostnames: ['foo.example.com'], rules: [[{}]] },
      ],
      host: 'foo.example.com',
      request: req('/x'),
      want: 'ns/exact/rule/0',
    },
    {
      name: 'a longer wildcard beats a shorter one',
      routes: [
        { key: 'ns/short', hostnames: ['*.example.com'], rules: [[{}]] },
        { key: 'ns/long', hostnames: ['*.api.example.com'], rules: [[{}]] },
      ],
      host: 'v1.api.example.com',
      request: req('/'),
      want: 'ns/long/rule/0',
    },
    {
      name: 'falls back to less specific hostnames when nothing matches',
      routes: [
        { key: 'ns/exact', hostnames: ['foo.example.com'], rules: [[{ path: { type: 'Exact', value: '/only' } }]] },
        { key: 'ns/any', rules: [[{}]] },
      ],
      host: 'foo.example.com',
      request: req('/other'),
      want: 'ns/any/rule/0',
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const { table: t } = table(c.routes);
      assert.equal(t.match(c.host ?? 'example.com', c.request)?.rule, c.want);
    });
  }

  it('serves no route for a host none of the routes claim', () => {
    const { table: t } = table([{ key: 'ns/a', hostnames: ['a.com'], rules: [[{}]] }]);
    assert.equal(t.match('b.com', req('/')), undefined);
  });

  it('drops a match with an invalid regex, reports it, and keeps the rest', () => {
    const { table: t, errors } = table([{ key: 'ns/a', rules: [[{ path: { type: 'RegularExpression', value: '(' } }, { path: { type: 'PathPrefix', value: '/ok' } }]] }]);
    assert.equal(errors.length, 1);
    assert.match(errors[0], /ns\/a\/rule\/0 match 0: invalid regular expression/);
    assert.equal(t.match('h', req('/ok'))?.rule, 'ns/a/rule/0');
  });

  it('rejects backtracking-only syntax instead of running it', () => {
    const { errors } = table([{ key: 'ns/a', rules: [[{ path: { type: 'RegularExpression', value: '(a)\\1' } }]] }]);
    assert.equal(errors.length, 1);
  });
});

describe('RouteTable.build (a route at a time, for compiling in slices)', () => {
  const specs: RouteSpec[] = [
    { key: 'ns/catch-all', rules: [[{ path: { type: 'PathPrefix', value: '/' } }]] },
    { key: 'ns/api', rules: [[{ path: { type: 'PathPrefix', value: '/api' } }], [{ path: { type: 'Exact', value: '/api/v1' } }]] },
    { key: 'ns/host', hostnames: ['a.example.com'], rules: [[{ path: { type: 'PathPrefix', value: '/api' } }]] },
    { key: 'ns/bad', rules: [[{ path: { type: 'RegularExpression', value: '(' } }]] },
  ];

  it('yields after every attachment and builds the same table as the constructor', () => {
    const errors: string[] = [];
    const job = RouteTable.build(source(specs, errors));
    let yields = 0;
    let step = job.next();
    while (step.done !== true) {
      yields++;
      step = job.next();
    }
    assert.ok(yields >= specs.length, `${yields} yields for ${specs.length} routes`);
    const built = step.value;
    const { table: constructed, errors: constructedErrors } = table(specs);
    assert.deepEqual(errors, constructedErrors);
    for (const [host, path] of [['a.example.com', '/api/x'], ['b.example.com', '/api/v1'], ['b.example.com', '/api/x'], ['b.example.com', '/other']]) {
      assert.equal(built.match(host, req(path))?.rule, constructed.match(host, req(path))?.rule, `${host}${path}`);
    }
    assert.equal(built.match('a.example.com', req('/api/x'))?.rule, 'ns/host/rule/0');
    assert.equal(built.match('b.example.com', req('/api/v1'))?.rule, 'ns/api/rule/1');
  });
});

describe('RouteTable.withRoutes: a changed route\'s entries replaced, the same table a build gives', () => {
  /** A table's lists as plain data: host → [routeKey, rule payload, match index] in order. */
  const shape = (t: RouteTable<string>) => [...t.buckets()].map(([host, entries]) => [host, entries.map((e) => [e.routeKey, e.rule, e.matchIndex])] as const).sort((a, b) => String(a[0]).localeCompare(String(b[0])));
  const prefix = (value: string): RouteMatch => ({ path: { type: 'PathPrefix', value } });
  const base: RouteSpec[] = [
    { key: 'ns/a', rules: [[prefix('/a')]] },
    { key: 'ns/b', rules: [[prefix('/b'), prefix('/bb')], [{ path: { type: 'Exact', value: '/b/x' } }]] },
    { key: 'ns/c', created: '2023-01-01T00:00:00Z', rules: [[prefix('/')]] },
    { key: 'ns/d', hostnames: ['a.example.com', '*.example.com'], rules: [[prefix('/a')]] },
    { key: 'ns/e', created: '2025-01-01T00:00:00Z', rules: [[prefix('/a')]] },
  ];
  const rows: { name: string; change: RouteSpec }[] = [
    { name: 'a longer path moves the route ahead', change: { key: 'ns/a', rules: [[prefix('/a/very/long')]] } },
    { name: 'a shorter path moves it behind', change: { key: 'ns/b', rules: [[prefix('/')], [{ path: { type: 'Exact', value: '/b/x' } }]] } },
    { name: 'a newer creation time (the tie-break) moves it behind an equal match', change: { key: 'ns/a', created: '2026-01-01T00:00:00Z', rules: [[prefix('/a')]] } },
    { name: 'fewer rules', change: { key: 'ns/b', rules: [[prefix('/b')]] } },
    { name: 'no rules at all', change: { key: 'ns/a', rules: [] } },
    { name: 'a route on hostnames (two lists)', change: { key: 'ns/d', hostnames: ['a.example.com', '*.example.com'], rules: [[prefix('/z')], [{ path: { type: 'Exact', value: '/a' } }]] } },
    { name: 'the first route in order', change: { key: 'ns/c', created: '2023-01-01T00:00:00Z', rules: [[{ path: { type: 'Exact', value: '/' } }]] } },
  ];
  for (const row of rows) {
    it(row.name, () => {
      const errors: string[] = [];
      const before = new RouteTable<string>(source(base, errors));
      const after = base.map((s) => (s.key === row.change.key ? row.change : s));
      const src = source(after, errors);
      const route = src.routes[row.change.key] as Route;
      const changed = before.withRoutes([{ routeKey: route.key, hostnames: row.change.hostnames ?? [], entries: attachmentEntries({ routeKey: route.key, hostnames: [] }, src.routes, src) ?? [] }]);
      assert.deepEqual(shape(changed), shape(new RouteTable<string>(source(after, []))));
      assert.notDeepEqual(shape(changed), shape(before), 'the change shows');
      assert.deepEqual(shape(before), shape(new RouteTable<string>(source(base, []))), 'the table it came from is unchanged');
    });
  }

  it('a list the changed routes are not on is the same array', () => {
    const before = new RouteTable<string>(source(base, []));
    const after = base.map((s) => (s.key === 'ns/a' ? { key: 'ns/a', rules: [[prefix('/q')]] } : s));
    const src = source(after, []);
    const changed = before.withRoutes([{ routeKey: 'ns/a', hostnames: [], entries: attachmentEntries({ routeKey: 'ns/a', hostnames: [] }, src.routes, src) ?? [] }]);
    assert.equal(changed.buckets().get('a.example.com'), before.buckets().get('a.example.com'));
    assert.notEqual(changed.buckets().get(null), before.buckets().get(null));
    assert.equal(changed.match('x.example.com', req('/q'))?.rule, 'ns/a/rule/0');
    assert.equal(before.match('x.example.com', req('/q'))?.rule, 'ns/c/rule/0', 'the old table still serves the old routes');
  });

  it('assemble builds the table build() does', () => {
    const src = source(base, []);
    const job = RouteTable.assemble(src.attachments.map((att) => ({ routeKey: att.routeKey, hostnames: att.hostnames, entries: attachmentEntries(att, src.routes, src) ?? [] })));
    let step = job.next();
    while (step.done !== true) step = job.next();
    assert.deepEqual(shape(step.value), shape(new RouteTable<string>(source(base, []))));
  });
});
