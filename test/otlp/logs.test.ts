/**
 * frontend `accessLog.otlp` end to end: a gateway built from YAML exports each access-log record
 * to a test OTLP receiver over OTLP/HTTP (binary protobuf, default path /v1/logs) and OTLP/gRPC,
 * decoded with the official opentelemetry-proto definitions. The export's `filter` and
 * `attributes` default to the parent access log's and can be its own; its CEL sees the identity
 * the route's policy established (`apiKey.name`).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startGateway, type GatewayHarness } from '../support/gateway.ts';
import { gateway, gatewayClass, prefixRoute, routeTrafficPolicy, service } from '../support/manifests.ts';
import { startEchoServer, type EchoServer } from '../support/echo-server.ts';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedLog } from './receiver.ts';

async function waitForLogs(receiver: OtlpReceiver, predicate: (logs: readonly ReceivedLog[]) => boolean, timeoutMs = 10_000): Promise<ReceivedLog[]> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate(receiver.logs)) {
    if (Date.now() > deadline) throw new Error(`OTLP receiver: logs not received in ${timeoutMs} ms; got ${JSON.stringify(receiver.logs.map((l) => l.attributes))}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return receiver.logs;
}

function gatewayYaml(echo: EchoServer, accessLog: string): string {
  return gatewayClass() + gateway('gw', [{ name: 'http', port: 80 }]) + service('echo', { host: '127.0.0.1', port: echo.port })
    + prefixRoute('svc', '/svc', 'echo') + prefixRoute('open', '/open', 'echo')
    + routeTrafficPolicy('svc', 'svc', 'apiKeyAuthentication: { secretRef: { name: keys } }')
    + `---\napiVersion: v1\nkind: Secret\nmetadata: { name: keys, namespace: default }\nstringData: { team-a: sk-team-a }\n`
    + `---
apiVersion: switchboard.dev/v1alpha1
kind: ProxyPolicy
metadata: { name: logged }
spec:
  targetRefs: [{ group: gateway.networking.k8s.io, kind: Gateway, name: gw }]
  frontend:
    accessLog:
${accessLog}`;
}

for (const protocol of ['HTTP', 'GRPC'] as const) {
  describe(`accessLog.otlp over ${protocol}: the parent's filter and attributes`, () => {
    let receiver: OtlpReceiver;
    let echo: EchoServer;
    let gw: GatewayHarness;

    before(async () => {
      [receiver, echo] = await Promise.all([startOtlpReceiver(protocol), startEchoServer('echo')]);
      gw = await startGateway(gatewayYaml(echo, `      filter: 'request.path.startsWith("/svc")'
      attributes:
        remove: [bytes]
        add: [{ name: key, expression: apiKey.name }]
      otlp:
        url: ${receiver.url}
        protocol: ${protocol}
`));
      assert.deepEqual(gw.applyErrors, []);
    });

    after(async () => {
      await gw?.close();
      await Promise.all([receiver?.close(), echo?.close()]);
    });

    it('each request the filter lets through arrives as a record with the line fields and the CEL attributes', async () => {
      assert.equal((await gw.request(80, { path: '/svc/a?token=secret', headers: { authorization: 'Bearer sk-team-a' } })).status, 200);
      assert.equal((await gw.request(80, { path: '/open/b' })).status, 200);
      assert.equal((await gw.request(80, { path: '/svc/c' })).status, 401);
      const logs = await waitForLogs(receiver, (all) => all.length >= 2);
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.equal(receiver.logs.length, 2, 'the /open request is filtered out');
      const [ok, refused] = [logs.find((l) => l.attributes.status === 200), logs.find((l) => l.attributes.status === 401)];
      assert.ok(ok && refused, JSON.stringify(logs));
      assert.equal(ok.body, 'request');
      assert.equal(ok.attributes.method, 'GET');
      assert.equal(ok.attributes.path, '/svc/a', 'the query string is left out');
      assert.equal(ok.attributes.route, 'default/svc');
      assert.equal(ok.attributes.key, 'team-a');
      assert.equal(ok.attributes.bytes, undefined, 'removed');
      assert.equal(typeof ok.attributes.durationMs, 'number');
      assert.equal(refused.attributes.key, undefined, 'a refused key earns no apiKey: the pair drops');
      if (protocol === 'HTTP') assert.ok(receiver.contentTypes.every((t) => t.startsWith('application/x-protobuf')), `binary protobuf, got ${receiver.contentTypes.join(', ')}`);
    });
  });
}

describe('accessLog.otlp: its own filter and attributes', () => {
  let receiver: OtlpReceiver;
  let echo: EchoServer;
  let gw: GatewayHarness;

  before(async () => {
    [receiver, echo] = await Promise.all([startOtlpReceiver('HTTP'), startEchoServer('echo')]);
    gw = await startGateway(gatewayYaml(echo, `      attributes:
        add: [{ name: stdoutOnly, expression: '"yes"' }]
      otlp:
        url: ${receiver.url}
        protocol: HTTP
        path: /v1/logs
        filter: 'response.code >= 400'
        attributes:
          remove: [durationMs]
          add: [{ name: code, expression: 'response.code' }]
`));
    assert.deepEqual(gw.applyErrors, []);
  });

  after(async () => {
    await gw?.close();
    await Promise.all([receiver?.close(), echo?.close()]);
  });

  it('only refused requests are exported, with the export\'s own fields', async () => {
    assert.equal((await gw.request(80, { path: '/open/fine' })).status, 200);
    assert.equal((await gw.request(80, { path: '/svc/nokey' })).status, 401);
    const logs = await waitForLogs(receiver, (all) => all.length >= 1);
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(receiver.logs.length, 1);
    const [log] = logs;
    assert.equal(log?.attributes.status, 401);
    assert.equal(log?.attributes.code, 401);
    assert.equal(log?.attributes.durationMs, undefined);
    assert.equal(log?.attributes.stdoutOnly, undefined, 'the parent\'s attributes are not the export\'s when it has its own');
  });
});
