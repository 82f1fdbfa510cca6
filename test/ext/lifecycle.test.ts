/**
 * Policy clients across config swaps, through YAML → translate → ProxyRuntime.apply against a
 * real ext_authz gRPC server that counts its HTTP/2 sessions: a swap that keeps the extAuth
 * policy reuses the gateway's channel, a swap that drops it closes the channel — but only after
 * the request that was waiting on the service when the swap happened has been answered.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { create } from '@bufbuild/protobuf';
import { Registry } from 'prom-client';
import { parseAllDocuments } from 'yaml';
import type { KubeObject } from '../../src/api/gateway/object.ts';
import { silentLogger } from '../../src/common/logger.ts';
import { translate } from '../../src/controller/translate/index.ts';
import { Authorization, CheckResponseSchema } from '../../src/proxy/ext/gen/envoy/service/auth/v3/external_auth_pb.js';
import { ProxyRuntime } from '../../src/proxy/runtime.ts';
import { sendRequest } from '../support/client.ts';
import { startEchoServer, type EchoServer } from '../support/echo-server.ts';
import { gateway, gatewayClass, prefixRoute, routeTrafficPolicy, service } from '../support/manifests.ts';
import { startGrpcServer, type RunningGrpcServer } from './servers.ts';

function objects(text: string): KubeObject[] {
  return parseAllDocuments(text).map((d) => d.toJS() as KubeObject).filter((o) => o !== null);
}

/** Polls `check` every 20 ms for at most `ms`; bounded in time and count. */
async function eventually(check: () => boolean, ms = 5000): Promise<boolean> {
  for (let i = 0; i < ms / 20; i++) {
    if (check()) return true;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return check();
}

describe('policy clients across config swaps', () => {
  let echo: EchoServer;
  let authz: RunningGrpcServer;
  let runtime: ProxyRuntime;
  let port: number;
  /** Checks for `/slow` wait until the test lets them go. */
  let releaseSlow: (() => void) | undefined;
  let slowArrived: (() => void) | undefined;

  const base = () => gatewayClass() + service('echo', echo) + gateway('gw', [{ name: 'http', port: 80 }]);
  const withAuthz = (extraRoute: boolean) =>
    base() + prefixRoute('guarded', '/', 'echo') + routeTrafficPolicy('guarded', 'guarded', `extAuth: { url: "${authz.url}", grpc: {} }`) +
    (extraRoute ? prefixRoute('other', '/other', 'echo') : '');
  const withoutAuthz = () => base() + prefixRoute('guarded', '/', 'echo');

  async function apply(yaml: string): Promise<void> {
    const { config } = translate(objects(yaml));
    assert.deepEqual((await runtime.apply(config)).errors, []);
    port = runtime.portOf(80) as number;
  }

  before(async () => {
    echo = await startEchoServer('echo');
    authz = await startGrpcServer((router) => router.service(Authorization, {
      async check(req) {
        if (req.attributes?.request?.http?.path === '/slow') {
          await new Promise<void>((resolve) => {
            releaseSlow = resolve;
            slowArrived?.();
          });
        }
        return create(CheckResponseSchema, { status: { code: 0 }, httpResponse: { case: 'okResponse', value: {} } });
      },
    }));
    runtime = new ProxyRuntime({ logger: silentLogger, registry: new Registry(), bindAddress: '127.0.0.1', listenPort: () => 0 });
  });
  after(async () => {
    releaseSlow?.();
    await runtime?.close({ graceMs: 0 });
    await authz?.close();
    await echo?.close();
  });

  it('a swap that keeps the extAuth policy reuses its channel', async () => {
    await apply(withAuthz(false));
    assert.equal((await sendRequest(port, { path: '/a' })).status, 200);
    assert.equal(authz.sessions.opened, 1);

    await apply(withAuthz(true));
    assert.equal((await sendRequest(port, { path: '/b' })).status, 200);
    assert.equal((await sendRequest(port, { path: '/other' })).status, 200, 'the new route serves');
    assert.deepEqual(authz.sessions, { opened: 1, closed: 0 }, 'the same HTTP/2 session carried the checks of both versions');
  });

  it('a swap that drops it closes the channel after the request still waiting on the service', async () => {
    const arrived = new Promise<void>((resolve) => (slowArrived = resolve));
    const slow = sendRequest(port, { path: '/slow' });
    await arrived;

    await apply(withoutAuthz());
    // The new config serves without the policy while the old one's check is still pending.
    assert.equal((await sendRequest(port, { path: '/free' })).status, 200);
    assert.equal(authz.sessions.closed, 0, 'the channel stays open for the request in flight');

    releaseSlow?.();
    assert.equal((await slow).status, 200, 'the request that started on the old config completes its check');
    assert.ok(await eventually(() => authz.sessions.closed === 1), `the service saw the connection end: ${JSON.stringify(authz.sessions)}`);
    assert.equal(authz.sessions.opened, 1);
  });
});
