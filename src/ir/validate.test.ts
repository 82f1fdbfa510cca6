import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, it } from 'node:test';
import { parse } from 'yaml';
import type { Backend, Bind, Listener, ProxyConfig, Route } from './types.ts';
import { deltaFrom, patchConfig } from './config-delta.ts';
import { validateConfig } from './validate.ts';

const GOLDEN = join(import.meta.dirname, '../../test/golden');
const OUTPUT_MARKER = /^---[ \t]*\r?\n# Output[^\n]*\n/m;

function goldenFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? goldenFiles(join(dir, e.name)) : e.name.endsWith('.yaml') ? [join(dir, e.name)] : []))
    .sort();
}

/** The config a golden case records (what the translator produced for its input). */
function goldenConfig(file: string): ProxyConfig {
  const text = readFileSync(file, 'utf8');
  const marker = OUTPUT_MARKER.exec(text);
  assert.ok(marker, `${file} has no Output document`);
  return (parse(text.slice(marker.index + marker[0].length)) as { config: ProxyConfig }).config;
}

describe('validateConfig: every golden config passes', () => {
  const files = goldenFiles(GOLDEN);
  it('finds the golden cases', () => assert.ok(files.length > 20));
  for (const file of files) {
    it(relative(GOLDEN, file), () => assert.deepEqual(validateConfig(goldenConfig(file)), []));
  }
});

/** A copy of a golden config, changed by `edit` (the copy is plain mutable JSON). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Mutable = Record<string, any>;
function broken(file: string, edit: (c: Mutable) => void): ProxyConfig {
  const copy = structuredClone(goldenConfig(join(GOLDEN, file))) as unknown as Mutable;
  edit(copy);
  return copy as unknown as ProxyConfig;
}

const SIMPLE = 'basic/simple-route.yaml';
const ROUTE = 'routes["default/api"]';
const BACKEND = 'service/default/api:80';

/** SIMPLE with a backend policy whose `auth` is `auth` (as a hand-written or buggy IR could carry it). */
const withBackendAuth = (auth: Mutable): ProxyConfig => broken(SIMPLE, (c) => { c.routes['default/api'].rules[0].backends[0].backendPolicy = { auth, sources: {} }; });

describe('validateConfig: each broken invariant is reported with its path', () => {
  const rows: { name: string; config: ProxyConfig; path: string; message: RegExp }[] = [
    {
      name: 'a rule backend missing from backends',
      config: broken(SIMPLE, (c) => { c.routes['default/api'].rules[0].backends[0].backendKey = 'service/default/gone:80'; }),
      path: `${ROUTE}.rules[0].backends[0].backendKey`, message: /not in backends/,
    },
    {
      name: 'a negative weight',
      config: broken(SIMPLE, (c) => { c.routes['default/api'].rules[0].backends[0].weight = -1; }),
      path: `${ROUTE}.rules[0].backends[0].weight`, message: /non-negative integer/,
    },
    {
      name: 'a NaN weight',
      config: broken(SIMPLE, (c) => { c.routes['default/api'].rules[0].backends[0].weight = Number.NaN; }),
      path: `${ROUTE}.rules[0].backends[0].weight`, message: /non-negative integer/,
    },
    {
      name: 'a listener attaching a route missing from routes',
      config: broken(SIMPLE, (c) => { c.binds[0].listeners[0].routes[0].routeKey = 'default/gone'; }),
      path: 'binds[0].listeners[0].routes[0].routeKey', message: /not in routes/,
    },
    {
      name: 'two binds on one port',
      config: broken(SIMPLE, (c) => { c.binds.push({ ...c.binds[0], key: 'bind/other', listeners: [] }); }),
      path: 'binds[1].port', message: /also bound by bind\/8080/,
    },
    {
      name: 'a duplicate bind key',
      config: broken(SIMPLE, (c) => { c.binds.push({ ...c.binds[0], port: 9090, listeners: [] }); }),
      path: 'binds[1].key', message: /duplicate bind key/,
    },
    {
      name: 'a port out of range',
      config: broken(SIMPLE, (c) => { c.binds[0].port = 70000; }),
      path: 'binds[0].port', message: /not in 1\.\.65535/,
    },
    {
      name: 'a listener protocol other than its bind',
      config: broken(SIMPLE, (c) => { Object.assign(c.binds[0].listeners[0], { protocol: 'HTTPS', tls: { certificates: [{ certPem: 'c', keyPem: 'k' }] } }); }),
      path: 'binds[0].listeners[0].protocol', message: /HTTPS on a HTTP bind/,
    },
    {
      name: 'a session key that is not 64 hex characters',
      config: broken(SIMPLE, (c) => { c.binds[0].listeners[0].sessionKey = 'not-a-key'; }),
      path: 'binds[0].listeners[0].sessionKey', message: /64 lowercase hexadecimal/,
    },
    {
      name: 'an HTTPS listener without a certificate',
      config: broken(SIMPLE, (c) => { c.binds[0].protocol = 'HTTPS'; c.binds[0].listeners[0].protocol = 'HTTPS'; }),
      path: 'binds[0].listeners[0].tls', message: /at least one certificate/,
    },
    {
      name: 'a duplicate listener key',
      config: broken(SIMPLE, (c) => { c.binds[0].listeners.push(c.binds[0].listeners[0]); }),
      path: 'binds[0].listeners[1].key', message: /duplicate listener key/,
    },
    {
      name: 'a route whose key differs from its record key',
      config: broken(SIMPLE, (c) => { c.routes['default/api'].key = 'default/other'; }),
      path: `${ROUTE}.key`, message: /differs from its record key/,
    },
    {
      name: 'a duplicate rule key',
      config: broken(SIMPLE, (c) => { const r = c.routes['default/api'] as Route; c.routes['default/api'] = { ...r, rules: [r.rules[0], r.rules[0]] }; }),
      path: `${ROUTE}.rules[1].key`, message: /duplicate rule key/,
    },
    {
      name: 'a negative request timeout',
      config: broken(SIMPLE, (c) => { c.routes['default/api'].rules[0].timeouts = { requestMs: -5 }; }),
      path: `${ROUTE}.rules[0].timeouts.requestMs`, message: /non-negative/,
    },
    {
      name: 'a mirror to a backend missing from backends',
      config: broken(SIMPLE, (c) => { c.routes['default/api'].rules[0].filters.push({ type: 'RequestMirror', backendKey: 'service/default/gone:80' }); }),
      path: `${ROUTE}.rules[0].filters[0].backendKey`, message: /not in backends/,
    },
    {
      name: 'a mirror percent over 100',
      config: broken(SIMPLE, (c) => { c.routes['default/api'].rules[0].filters.push({ type: 'RequestMirror', backendKey: BACKEND, percent: 150 }); }),
      path: `${ROUTE}.rules[0].filters[0].percent`, message: /0\.\.100/,
    },
    {
      name: 'a backend whose key differs from its record key',
      config: broken(SIMPLE, (c) => { c.backends[BACKEND].key = 'service/default/x:80'; }),
      path: `backends[${JSON.stringify(BACKEND)}].key`, message: /differs from its record key/,
    },
    {
      name: 'an endpoint port of 0',
      config: broken(SIMPLE, (c) => { c.backends[BACKEND].endpoints[1].port = 0; }),
      path: `backends[${JSON.stringify(BACKEND)}].endpoints[1].port`, message: /not in 1\.\.65535/,
    },
    {
      name: 'an extAuth endpoint backend missing from backends',
      config: broken(SIMPLE, (c) => { c.routes['default/api'].rules[0].traffic = { extAuth: { backendKey: 'service/default/authz:9000' }, sources: {} }; }),
      path: `${ROUTE}.rules[0].traffic.extAuth.backendKey`, message: /not in backends/,
    },
    {
      name: 'a tunnel backend missing from backends, in a per-listener backend policy',
      config: broken(SIMPLE, (c) => { c.routes['default/api'].rules[0].backends[0].backendPolicyByListener = { 'default/gw/http': { tunnel: { backendKey: 'service/default/proxy:3128' }, sources: {} } }; }),
      path: `${ROUTE}.rules[0].backends[0].backendPolicyByListener["default/gw/http"].tunnel.backendKey`, message: /not in backends/,
    },
    {
      name: 'a per-listener traffic policy for a listener no bind has',
      config: broken(SIMPLE, (c) => { c.routes['default/api'].rules[0].trafficByListener = { 'default/gw/gone': { sources: {} } }; }),
      path: `${ROUTE}.rules[0].trafficByListener["default/gw/gone"]`, message: /not in any bind/,
    },
    {
      name: 'an empty authorization expression',
      config: broken(SIMPLE, (c) => { c.binds[0].listeners[0].preRouting = { authorization: { rules: [{ matchExpressions: ['true', ' '], action: 'Allow', source: 'ProxyPolicy/default/p' }] }, sources: {} }; }),
      path: 'binds[0].listeners[0].preRouting.authorization.rules[0].matchExpressions[1]', message: /empty CEL/,
    },
    {
      name: 'an empty conditional condition',
      config: broken(SIMPLE, (c) => { c.routes['default/api'].rules[0].traffic = { directResponse: { conditional: [{ condition: '', policy: { status: 503 } }] }, sources: {} }; }),
      path: `${ROUTE}.rules[0].traffic.directResponse.conditional[0].condition`, message: /empty CEL/,
    },
    {
      name: 'two backend auth mechanisms (the proxy would use one and drop the other)',
      config: withBackendAuth({ key: 'k', jwtSign: { signingKey: 'pem' } }),
      path: `${ROUTE}.rules[0].backends[0].backendPolicy.auth`, message: /at most one auth mechanism.*key, jwtSign/,
    },
    {
      name: 'an oauthTokenExchange endpoint with both url and backendKey',
      config: withBackendAuth({ oauthTokenExchange: { url: 'https://idp.example/', backendKey: BACKEND } }),
      path: `${ROUTE}.rules[0].backends[0].backendPolicy.auth.oauthTokenExchange`, message: /exactly one of backendKey and url/,
    },
    {
      name: 'an empty oauthTokenExchange additionalParams expression',
      config: withBackendAuth({ oauthTokenExchange: { url: 'https://idp.example/', additionalParams: { tenant: ' ' } } }),
      path: `${ROUTE}.rules[0].backends[0].backendPolicy.auth.oauthTokenExchange.additionalParams.tenant`, message: /empty CEL/,
    },
    {
      name: 'a ClientSecretBasic client authentication without its secret',
      config: withBackendAuth({ oauthTokenExchange: { url: 'https://idp.example/', clientAuth: { clientId: 'gw' } } }),
      path: `${ROUTE}.rules[0].backends[0].backendPolicy.auth.oauthTokenExchange.clientAuth.secret`, message: /ClientSecretBasic needs/,
    },
    {
      name: 'a crossAppAccess identity provider without clientAuth',
      config: withBackendAuth({
        crossAppAccess: { audience: 'https://as.example', identityProvider: { url: 'https://idp.example/' }, resourceAuthorizationServer: { url: 'https://as.example/', clientAuth: { clientId: 'gw', secret: 's' } } },
      }),
      path: `${ROUTE}.rules[0].backends[0].backendPolicy.auth.crossAppAccess.identityProvider.clientAuth`, message: /missing clientAuth/,
    },
    {
      name: 'a jwtSign without its signing key',
      config: withBackendAuth({ jwtSign: { alg: 'ES256' } }),
      path: `${ROUTE}.rules[0].backends[0].backendPolicy.auth.jwtSign.signingKey`, message: /missing signing key/,
    },
    {
      name: 'a jwtSign claim the gateway sets',
      config: withBackendAuth({ jwtSign: { signingKey: 'pem', claims: { exp: 1 } } }),
      path: `${ROUTE}.rules[0].backends[0].backendPolicy.auth.jwtSign.claims.exp`, message: /set by the gateway/,
    },
    {
      name: 'a credential location naming two places',
      config: withBackendAuth({ key: 'k', location: { header: { name: 'x-key' }, cookie: { name: 'k' } } }),
      path: `${ROUTE}.rules[0].backends[0].backendPolicy.auth.location`, message: /exactly one of header.*found header, cookie/,
    },
    {
      name: 'an MCP OAuth resourceMetadata that is not an object',
      config: broken(SIMPLE, (c) => {
        c.routes['default/api'].rules[0].traffic = { jwtAuthentication: { mode: 'Strict', providers: [{ issuer: 'https://as', jwks: { inline: '{}' } }], mcp: { resourceMetadata: [1] } }, sources: {} };
      }),
      path: `${ROUTE}.rules[0].traffic.jwtAuthentication.mcp.resourceMetadata`, message: /must be an object/,
    },
    {
      name: 'a duplicate MCP target name',
      config: broken('backends/proxybackend-mcp.yaml', (c) => {
        const mcp = Object.values(c.backends as Record<string, Mutable>).find((b) => b.mcp)!.mcp;
        mcp.targets.push(mcp.targets[0]);
      }),
      path: '', message: /duplicate target name/,
    },
  ];
  for (const row of rows) {
    it(row.name, () => {
      const problems = validateConfig(row.config);
      assert.equal(problems.length, 1, JSON.stringify(problems));
      if (row.path !== '') assert.equal(problems[0].path, row.path);
      assert.match(problems[0].message, row.message);
    });
  }
});

describe('validateConfig: scale', () => {
  // Its cost is measured in bench/control-plane.ts (never timed here: a loaded machine would fail it).
  it('a 10k-route config is checked and found clean', () => {
    const base = goldenConfig(join(GOLDEN, SIMPLE));
    const template = base.routes['default/api'];
    const routes: Record<string, Route> = {};
    const attachments = [];
    for (let i = 0; i < 10_000; i++) {
      const key = `default/r${i}`;
      routes[key] = { ...template, key, name: `r${i}`, rules: template.rules.map((r) => ({ ...r, key: `${key}/rule/0`, traffic: { authorization: { rules: [{ matchExpressions: ['true'], action: 'Allow', source: 'p' }] }, sources: {} } })) };
      attachments.push({ routeKey: key, hostnames: [] });
    }
    const config: ProxyConfig = { ...base, routes, binds: [{ ...base.binds[0], listeners: [{ ...base.binds[0].listeners[0], routes: attachments }] }] };
    assert.deepEqual(validateConfig(config), []);
  });
});

describe('validateConfig against the previous clean config: only what changed is checked again', () => {
  const previous = goldenConfig(join(GOLDEN, SIMPLE));
  const badRoute = (c: ProxyConfig): Route => ({ ...(c.routes['default/api'] as Route), rules: [{ ...(c.routes['default/api'] as Route).rules[0]!, timeouts: { requestMs: -1 } }] });
  const rows: { name: string; next: (c: ProxyConfig) => ProxyConfig; problems: number }[] = [
    { name: 'the same config', next: (c) => ({ ...c }), problems: 0 },
    { name: 'a changed route is checked', next: (c) => ({ ...c, routes: { ...c.routes, 'default/api': badRoute(c) } }), problems: 1 },
    {
      // The unchanged route names a backend that went away: everything is checked again.
      name: 'a removed backend an unchanged route names', next: (c) => ({ ...c, backends: {} }), problems: 1,
    },
    {
      name: 'a removed listener an unchanged route\'s byListener names',
      next: (c) => {
        const route = c.routes['default/api'] as Route;
        const withByListener: Route = { ...route, rules: [{ ...route.rules[0]!, trafficByListener: { [c.binds[0]!.listeners[0]!.key]: { sources: {} } } }] };
        const before: ProxyConfig = { ...c, routes: { 'default/api': withByListener } };
        assert.deepEqual(validateConfig(before), []);
        previousOf.set(before, true);
        return { ...before, binds: [{ ...c.binds[0]!, listeners: [{ ...c.binds[0]!.listeners[0]!, key: 'renamed' }] }] };
      },
      problems: 1,
    },
  ];
  const previousOf = new Map<ProxyConfig, boolean>();
  for (const row of rows) {
    it(row.name, () => {
      previousOf.clear();
      const next = row.next(previous);
      const base = [...previousOf.keys()][0] ?? previous;
      assert.equal(validateConfig(next, base).length, row.problems);
      assert.equal(validateConfig(next).length, row.problems, 'a full check agrees');
    });
  }

  it('an unchanged route (same object) is not walked again', () => {
    const route = previous.routes['default/api'] as Route;
    let reads = 0;
    const watched = new Proxy(route, { get: (target, key, receiver) => { reads++; return Reflect.get(target, key, receiver) as unknown; } });
    const before: ProxyConfig = { ...previous, routes: { 'default/api': watched } };
    validateConfig(before);
    assert.ok(reads > 0);
    reads = 0;
    assert.deepEqual(validateConfig({ ...before }, before), []);
    assert.equal(reads, 0);
  });
});

describe('validateConfig of a config patched from the previous clean one: only the patch is checked', () => {
  const previous = goldenConfig(join(GOLDEN, SIMPLE));
  const route = previous.routes['default/api'] as Route;
  const bind = previous.binds[0] as Bind;
  const listener = bind.listeners[0] as Listener;
  const none = { set: {}, removed: [] };
  const badRoute: Route = { ...route, rules: [{ ...route.rules[0]!, timeouts: { requestMs: -1 } }] };
  const rows: { name: string; next: () => ProxyConfig; problems: number }[] = [
    { name: 'an empty patch', next: () => patchConfig(previous, 'v2', [...previous.binds], none, none), problems: 0 },
    { name: 'a changed route is checked', next: () => patchConfig(previous, 'v2', [...previous.binds], { set: { 'default/api': badRoute }, removed: [] }, none), problems: 1 },
    {
      name: 'an added route naming a missing backend is checked',
      next: () => patchConfig(previous, 'v2', [...previous.binds], { set: { 'default/new': { ...route, key: 'default/new', rules: [{ ...route.rules[0]!, key: 'default/new/rule/0', backends: [{ ...route.rules[0]!.backends[0]!, backendKey: 'service/default/gone:80' }] }] } }, removed: [] }, none),
      problems: 1,
    },
    { name: 'a removed backend an unchanged route names', next: () => patchConfig(previous, 'v2', [...previous.binds], none, { set: {}, removed: Object.keys(previous.backends) }), problems: 1 },
    {
      // The bind is the same object, but the route one of its listeners attaches went away: the bind is walked again.
      name: 'a removed route an unchanged bind attaches', next: () => patchConfig(previous, 'v2', [...previous.binds], { set: {}, removed: ['default/api'] }, none), problems: 1,
    },
    {
      name: 'a changed bind attaching a missing route is checked',
      next: () => patchConfig(previous, 'v2', [{ ...bind, listeners: [{ ...listener, routes: [...listener.routes, { routeKey: 'default/gone', hostnames: [] }] }] }], none, none),
      problems: 1,
    },
    {
      name: 'an unchanged bind\'s listener key taken by a new bind',
      next: () => patchConfig(previous, 'v2', [...previous.binds, { ...bind, key: 'other', port: bind.port + 1 }], none, none),
      problems: 1,
    },
    {
      name: 'a renamed listener an unchanged route\'s byListener names',
      next: () => {
        const withByListener: Route = { ...route, rules: [{ ...route.rules[0]!, trafficByListener: { [listener.key]: { sources: {} } } }] };
        const before = patchConfig(previous, 'v2', [...previous.binds], { set: { 'default/api': withByListener }, removed: [] }, none);
        assert.deepEqual(validateConfig(before, previous), []);
        base = before;
        return patchConfig(before, 'v3', [{ ...bind, listeners: [{ ...listener, key: 'renamed' }] }], none, none);
      },
      problems: 1,
    },
  ];
  let base = previous;
  for (const row of rows) {
    it(row.name, () => {
      base = previous;
      const next = row.next();
      assert.ok(deltaFrom(next, base), 'the config carries its patch');
      assert.equal(validateConfig(next, base).length, row.problems, JSON.stringify(validateConfig(next, base)));
      assert.equal(validateConfig(next).length, row.problems, 'a full check agrees');
    });
  }

  it('neither the unchanged routes nor an unchanged bind\'s attachments are read', () => {
    let recordReads = 0;
    let attachmentReads = 0;
    const routes = new Proxy(previous.routes, { ownKeys: (target) => { recordReads++; return Reflect.ownKeys(target); } });
    const watchedListener = new Proxy(listener, { get: (target, key, receiver) => { if (key === 'routes') attachmentReads++; return Reflect.get(target, key, receiver) as unknown; } });
    const before: ProxyConfig = { ...previous, routes, binds: [{ ...bind, listeners: [watchedListener] }] };
    assert.deepEqual(validateConfig(before), []);
    assert.ok(recordReads > 0 && attachmentReads > 0, 'the watch sees a full check');
    recordReads = 0;
    attachmentReads = 0;
    // patchConfig reads the previous record's keys once (then keeps them): read them before counting.
    patchConfig(before, 'v1', [...before.binds], none, none);
    recordReads = 0;
    const next = patchConfig(before, 'v2', [...before.binds], { set: { 'default/api': { ...route } }, removed: [] }, none);
    recordReads = 0;
    assert.deepEqual(validateConfig(next, before), []);
    assert.equal(attachmentReads, 0);
    assert.equal(recordReads, 0);
  });

  it('a config checked whole keeps its records\' keys: its first patch does not read them again', () => {
    let keyReads = 0;
    const watch = <T extends object>(record: T): T => new Proxy(record, { ownKeys: (target) => { keyReads++; return Reflect.ownKeys(target); } });
    const whole: ProxyConfig = { ...previous, routes: watch({ ...previous.routes }), backends: watch({ ...previous.backends }) };
    assert.deepEqual(validateConfig(whole), []);
    assert.ok(keyReads > 0, 'the watch sees the full check read the keys');
    keyReads = 0;
    const backendKey = Object.keys(previous.backends)[0] as string;
    const next = patchConfig(whole, 'v2', [...whole.binds], { set: { 'default/api': { ...route } }, removed: [] }, { set: { [backendKey]: { ...previous.backends[backendKey] } as Backend }, removed: [] });
    assert.equal(keyReads, 0, 'the first edit reads no record\'s keys');
    assert.deepEqual(Object.keys(next.routes), Object.keys(previous.routes));
    assert.deepEqual(Object.keys(next.backends), Object.keys(previous.backends));
  });

  it('a changed route is checked against the patched config', () => {
    const next = patchConfig(previous, 'v2', [...previous.binds], { set: { 'default/api': badRoute }, removed: [] }, none);
    assert.deepEqual(validateConfig(next, previous).map((p) => p.path), [`${ROUTE}.rules[0].timeouts.requestMs`]);
  });
});
