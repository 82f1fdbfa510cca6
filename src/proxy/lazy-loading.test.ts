import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import * as limits from './ext/ratelimit/local.ts';
import { modulesLoadedBy } from '../../test/support/loaded-modules.ts';
import { lazyModule } from '../common/lazy-module.ts';

const RUN_GATEWAY = fileURLToPath(new URL('../cli/commands/run-gateway.ts', import.meta.url));

describe('lazyModule', () => {
  it('is the module a static import gets (the same classes), loaded once', () => {
    const get = lazyModule<typeof limits>(import.meta.url, './ext/ratelimit/local.ts');
    assert.equal(get(), get());
    assert.equal(get().LocalRateLimiter, limits.LocalRateLimiter);
  });

  it('takes only modules of ours: a package would load its CommonJS build beside the ES one', () => {
    assert.throws(() => lazyModule(import.meta.url, '@connectrpc/connect-node'), /not a module of ours/);
  });

  it("the gRPC transport endpoint.ts loads through its wrapper is connect-node's ES build, the one the clients import", async () => {
    const esm = await import('@connectrpc/connect-node');
    const viaWrapper = lazyModule<typeof esm>(import.meta.url, './ext/grpc-transport.ts')();
    assert.equal(viaWrapper.Http2SessionManager, esm.Http2SessionManager);
    // What requiring the package itself gives: another copy (why lazyModule refuses packages).
    assert.notEqual((createRequire(import.meta.url)('@connectrpc/connect-node') as typeof esm).Http2SessionManager, esm.Http2SessionManager);
  });

  it('the serving side of `switchboard run` loads no gRPC module and no OpenTelemetry SDK until a config needs one', () => {
    const urls = modulesLoadedBy(RUN_GATEWAY);
    assert.ok(urls.some((url) => url.endsWith('/proxy/runtime.ts')), 'the proxy was loaded');
    const grpc = urls.filter((url) => /@connectrpc|@bufbuild|\/ext\/gen\/|\/guardrails\/gen\//.test(url));
    assert.deepEqual(grpc, []);
    const sdk = urls.filter((url) => /@opentelemetry\/(sdk-|resources)/.test(url));
    assert.deepEqual(sdk, []);
  });
});
