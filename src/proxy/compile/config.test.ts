import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { UpstreamPools } from '../policies/backend/pools.ts';
import { SecureContextCache } from './tls-contexts.ts';
import { backend, bind, config, listener, route, rule } from '../testing/config.ts';
import { silentLogger } from '../../common/logger.ts';
import { compileConfig, compileConfigJob } from './config.ts';

describe('compileConfig', () => {
  const pools = new UpstreamPools();
  after(() => pools.close(100));

  it('reports broken pieces and keeps compiling the rest', () => {
    const routes = [
      route('default/bad-regex', [rule('default/bad-regex/rule/0', { matches: [{ path: { type: 'RegularExpression', value: '[' } }] })]),
      route('default/missing-backend', [rule('default/missing-backend/rule/0', { backends: [{ backendKey: 'svc-nope', weight: 1, filters: [] }] })]),
      route('default/missing-mirror', [rule('default/missing-mirror/rule/0', { filters: [{ type: 'RequestMirror', backendKey: 'svc-gone' }] })]),
    ];
    const { compiled, errors } = compileConfig(config({
      binds: [
        bind(80, [listener('http', [...routes.map((r) => r.key), 'default/not-in-config'])]),
        bind(443, [listener('https', [], { protocol: 'HTTPS', tls: { certificates: [{ certPem: 'not a cert', keyPem: 'not a key' }] } })], 'HTTPS'),
        bind(8443, [listener('https-no-cert', [], { protocol: 'HTTPS' })], 'HTTPS'),
      ],
      routes,
      backends: [backend('svc', [8080]), backend('svc-bad-endpoint', [8080], { endpoints: [{ host: 'bad host', port: 80 }] })],
    }), { pools, secureContexts: new SecureContextCache(), logger: silentLogger });
    assert.equal(compiled.binds.length, 3);
    const expected = [
      /default\/bad-regex\/rule\/0 match 0: invalid regular expression/,
      /default\/missing-backend\/rule\/0: backend svc-nope is not in the config/,
      /default\/missing-mirror\/rule\/0: mirror backend svc-gone is not in the config/,
      /unknown route default\/not-in-config/,
      /default\/gw\/https: invalid certificate/,
      /default\/gw\/https-no-cert: HTTPS listener has no certificate/,
      /backend svc-bad-endpoint: invalid endpoint bad host:80/,
    ];
    for (const pattern of expected) assert.ok(errors.some((e) => pattern.test(e)), `${pattern} in ${JSON.stringify(errors)}`);
    assert.equal(errors.length, expected.length);
    assert.equal(compiled.binds[1].tls, undefined);
    assert.equal(compiled.dispatchers.size, 1);
  });

  it('as a job, yields after every backend and route and compiles the same config', () => {
    const routes = Array.from({ length: 20 }, (_, i) => route(`default/r${i}`, [
      rule(`default/r${i}/rule/0`, { matches: [{ path: { type: 'PathPrefix', value: `/r${i}` } }], backends: [{ backendKey: 'svc', weight: 1, filters: [] }] }),
      rule(`default/r${i}/rule/1`, { matches: [{ path: { type: 'Exact', value: `/r${i}/exact` } }], backends: [{ backendKey: i === 7 ? 'svc-nope' : 'svc', weight: 1, filters: [] }] }),
    ]));
    const ir = config({ binds: [bind(80, [listener('http', routes.map((r) => r.key))])], routes, backends: [backend('svc', [8080]), backend('svc2', [8081])] });
    const ctx = { pools, secureContexts: new SecureContextCache(), logger: silentLogger };
    const job = compileConfigJob(ir, ctx);
    let yields = 0;
    let step = job.next();
    while (step.done !== true) {
      yields++;
      step = job.next();
    }
    // 2 backends + 20 routes (2 rules each), at least.
    assert.ok(yields >= 22, `${yields} yields`);
    const whole = compileConfig(ir, ctx);
    assert.deepEqual(step.value.errors, whole.errors);
    assert.deepEqual(step.value.errors, ['default/r7/rule/1: backend svc-nope is not in the config']);
    const listener80 = step.value.compiled.binds[0].listeners.lookup('example.com');
    assert.equal(listener80?.routes.match('example.com', { path: '/r7/exact', query: '', method: 'GET', headers: {} })?.rule.key, 'default/r7/rule/1');
  });
});
