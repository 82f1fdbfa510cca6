import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import * as limits from './ext/ratelimit/local.ts';
import { lazyModule } from './lazy-module.ts';

const RUN_GATEWAY = fileURLToPath(new URL('../cli/commands/run-gateway.ts', import.meta.url));

describe('lazyModule', () => {
  it('is the module a static import gets (the same classes), loaded once', () => {
    const get = lazyModule<typeof limits>(import.meta.url, './ext/ratelimit/local.ts');
    assert.equal(get(), get());
    assert.equal(get().LocalRateLimiter, limits.LocalRateLimiter);
  });

  it('the serving side of `switchboard run` loads no gRPC module and no OpenTelemetry SDK until a config needs one', () => {
    // Every module URL the process loads, printed at exit.
    const probe = `data:text/javascript,import module from 'node:module'; const urls = []; module.registerHooks({ load(url, context, next) { urls.push(url); return next(url, context); } }); process.on('exit', () => process.stdout.write(JSON.stringify(urls)));`;
    const child = spawnSync(process.execPath, ['--import', probe, '--input-type=module', '-e', `await import(${JSON.stringify(RUN_GATEWAY)});`], { encoding: 'utf8' });
    assert.equal(child.status, 0, child.stderr);
    const urls = JSON.parse(child.stdout) as string[];
    assert.ok(urls.some((url) => url.endsWith('/proxy/runtime.ts')), 'the proxy was loaded');
    const grpc = urls.filter((url) => /@connectrpc|@bufbuild|\/ext\/gen\/|\/guardrails\/gen\//.test(url));
    assert.deepEqual(grpc, []);
    const sdk = urls.filter((url) => /@opentelemetry\/(sdk-|resources)/.test(url));
    assert.deepEqual(sdk, []);
  });
});
