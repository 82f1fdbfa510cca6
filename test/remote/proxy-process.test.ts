/**
 * e2e of Kubernetes-mode config distribution: a controller (YAML folder → translator →
 * RemoteDistributor) and real `switchboard proxy` child processes serving HTTP through it — edits
 * and deletes reach the proxy, a config it cannot apply is NACKed while the last good one keeps
 * serving, a controller restart goes unnoticed by clients, all three transport modes work, and a
 * proxy of another identity gets nothing.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import type http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startEchoServer } from '../../examples/quickstart/echo-server.ts';
import { createCertificate } from '../support/certs.ts';
import { backendYaml, eventually, freePort, gatewayYaml, replaceFile, request, routeYaml, tempDir } from '../cli/harness.ts';
import { startController, startProxy, writeToken, type ProxyProcess, type TestController } from './harness.ts';

interface Echo { headers: Record<string, string>; url?: string }

describe('switchboard proxy fed by a remote controller', () => {
  let upstream: http.Server;
  let upstreamPort: number;
  const dirs: string[] = [];
  const cleanups: (() => Promise<unknown>)[] = [];

  before(async () => { ({ server: upstream, port: upstreamPort } = await startEchoServer(0)); });
  after(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
    upstream.close();
    upstream.closeAllConnections();
    for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
  });

  async function configFolder(): Promise<{ dir: string; gatewayPort: number }> {
    const dir = tempDir('remote');
    dirs.push(dir);
    const gatewayPort = await freePort();
    fs.writeFileSync(path.join(dir, 'gateway.yaml'), gatewayYaml(gatewayPort));
    fs.writeFileSync(path.join(dir, 'backend.yaml'), backendYaml(upstreamPort));
    fs.writeFileSync(path.join(dir, 'route.yaml'), routeYaml(1));
    return { dir, gatewayPort };
  }

  function track<T extends { stop(): Promise<unknown> }>(thing: T): T {
    cleanups.push(() => thing.stop());
    return thing;
  }

  const generationAt = async (port: number): Promise<string | undefined> => {
    const res = await request({ port, path: '/x' }).catch(() => undefined);
    return res?.status === 200 ? (JSON.parse(res.body) as Echo).headers['x-generation'] : undefined;
  };
  const waitGeneration = (proxy: ProxyProcess, port: number, generation: string, timeoutMs = 15_000): Promise<string> =>
    eventually(async () => ((await generationAt(port)) === generation ? generation : undefined), `generation ${generation} on the proxy:\n${proxy.output()}`, timeoutMs);

  it('serves, follows edits and deletes, NACKs what it cannot apply, and rides out a controller restart', async () => {
    const { dir, gatewayPort } = await configFolder();
    let controller: TestController = await startController(dir);
    const controllerPort = controller.port;
    cleanups.push(() => controller.stop());
    const proxy = track(await startProxy({ controller: `http://127.0.0.1:${controllerPort}`, tokenFile: writeToken(dir, 'token-default') }));

    await waitGeneration(proxy, gatewayPort, '1');
    assert.ok(await proxy.isReady());
    assert.ok(controller.events.acks.some((a) => a.gateway.namespace === 'default' && a.gateway.name === 'gw' && a.proxyId === 'proxy-0'));

    // An edit reaches the proxy.
    replaceFile(path.join(dir, 'route.yaml'), routeYaml(2));
    await waitGeneration(proxy, gatewayPort, '2');

    // A delete removes the route: the listener answers 404.
    fs.rmSync(path.join(dir, 'route.yaml'));
    await eventually(async () => ((await request({ port: gatewayPort, path: '/x' })).status === 404 ? true : undefined), 'the route gone');
    replaceFile(path.join(dir, 'route.yaml'), routeYaml(3));
    await waitGeneration(proxy, gatewayPort, '3');

    // A config the proxy cannot apply: a second listener on a port something else holds there.
    const blocker = net.createServer();
    await new Promise<void>((ok) => blocker.listen(0, '127.0.0.1', ok));
    cleanups.push(() => new Promise((ok) => blocker.close(ok)));
    const blockedPort = (blocker.address() as net.AddressInfo).port;
    replaceFile(path.join(dir, 'gateway.yaml'), gatewayYaml(gatewayPort).replace(
      `listeners: [{name: http, port: ${gatewayPort}, protocol: HTTP}]`,
      `listeners: [{name: http, port: ${gatewayPort}, protocol: HTTP}, {name: blocked, port: ${blockedPort}, protocol: HTTP}]`,
    ));
    replaceFile(path.join(dir, 'route.yaml'), routeYaml(4));
    const nack = await eventually(async () => controller.events.nacks[0], `a NACK:\n${proxy.output()}`);
    assert.equal(nack.gateway.name, 'gw');
    assert.equal(nack.proxyId, 'proxy-0');
    assert.match(nack.error, new RegExp(`${blockedPort}`));
    // … and the last good config keeps serving, whole: generation 3, not 4.
    assert.equal(await generationAt(gatewayPort), '3');
    assert.match(await proxy.metrics(), /switchboard_proxy_config_updates_total\{result="nack"\} 1/);
    assert.deepEqual(controller.distributor.proxies().map((p) => p.lastError?.length), [1]);

    // Fixed: the next config is applied.
    replaceFile(path.join(dir, 'gateway.yaml'), gatewayYaml(gatewayPort));
    await waitGeneration(proxy, gatewayPort, '4');

    // Controller restart: no request fails while it is away, and an edit made meanwhile arrives after.
    let failures = 0;
    let sent = 0;
    let polling = true;
    const poller = (async () => {
      while (polling) {
        sent++;
        if ((await generationAt(gatewayPort)) === undefined) failures++;
        await new Promise((ok) => setTimeout(ok, 20));
      }
    })();
    await controller.stop();
    await eventually(async () => (/switchboard_proxy_controller_connected 0/.test(await proxy.metrics()) ? true : undefined), 'the proxy noticing the controller left');
    replaceFile(path.join(dir, 'route.yaml'), routeYaml(5));
    await new Promise((ok) => setTimeout(ok, 300));
    assert.equal(await generationAt(gatewayPort), '4', 'the last config serves while the controller is away');
    assert.ok(await proxy.isReady(), 'still ready while the controller is away');
    controller = await startController(dir, { port: controllerPort });
    await waitGeneration(proxy, gatewayPort, '5');
    polling = false;
    await poller;
    assert.equal(failures, 0, `${failures} of ${sent} requests failed across the restart`);
  });

  it('refuses a proxy whose ServiceAccount is of another namespace (PERMISSION_DENIED): it gets no config', async () => {
    const { dir, gatewayPort } = await configFolder();
    const controller = track(await startController(dir));
    const intruder = track(await startProxy({ controller: `http://127.0.0.1:${controller.port}`, tokenFile: writeToken(dir, 'token-other'), proxyId: 'intruder' }));
    await eventually(async () => (/may only serve gateways of namespace other/.test(intruder.output()) ? true : undefined), `the refusal in the proxy's log:\n${intruder.output()}`);
    assert.equal(await intruder.isReady(), false);
    assert.equal(controller.distributor.proxies().length, 0);
    assert.equal((await request({ port: gatewayPort, path: '/x' }).catch(() => undefined))?.status, undefined, 'nothing listens for the gateway');
  });

  describe('transport modes', () => {
    let tls: { certPem: string; keyPem: string; caFile: string };
    before(async () => {
      const cert = await createCertificate(['controller.test']);
      const dir = tempDir('remote-ca');
      dirs.push(dir);
      const caFile = path.join(dir, 'ca.pem');
      fs.writeFileSync(caFile, cert.certPem);
      tls = { certPem: cert.certPem, keyPem: cert.keyPem, caFile };
    });

    it('tls: a proxy that checks the controller\'s certificate is served; a plaintext one is not', async () => {
      const { dir, gatewayPort } = await configFolder();
      const controller = track(await startController(dir, { mode: 'tls', tls }));
      const token = writeToken(dir, 'token-default');
      const plain = track(await startProxy({ controller: `http://127.0.0.1:${controller.port}`, tokenFile: token, proxyId: 'plain' }));
      const secure = track(await startProxy({ controller: `https://127.0.0.1:${controller.port}`, tokenFile: token, caFile: tls.caFile, serverName: 'controller.test', proxyId: 'secure' }));
      await waitGeneration(secure, gatewayPort, '1');
      await new Promise((ok) => setTimeout(ok, 300));
      assert.equal(await plain.isReady(), false, plain.output());
      assert.deepEqual(controller.distributor.proxies().map((p) => p.proxyId), ['secure']);
    });

    it('tls: a proxy that does not trust the controller\'s certificate does not connect', async () => {
      const { dir } = await configFolder();
      const controller = track(await startController(dir, { mode: 'tls', tls }));
      const proxy = track(await startProxy({ controller: `https://127.0.0.1:${controller.port}`, tokenFile: writeToken(dir, 'token-default'), serverName: 'controller.test' }));
      await eventually(async () => (/config stream failed/.test(proxy.output()) ? true : undefined), `a failed connection:\n${proxy.output()}`);
      assert.equal(controller.distributor.proxies().length, 0);
    });

    it('either: TLS and plaintext proxies on the same port', async () => {
      const { dir, gatewayPort } = await configFolder();
      const controller = track(await startController(dir, { mode: 'either', tls }));
      const token = writeToken(dir, 'token-default');
      // Two proxies of one gateway on one host would fight over its port: the second serves gateway gw2.
      fs.writeFileSync(path.join(dir, 'gateway2.yaml'), gatewayYaml(await freePort()).split('---\n')[1]?.replace('name: gw,', 'name: gw2,') ?? '');
      const plain = track(await startProxy({ controller: `http://127.0.0.1:${controller.port}`, tokenFile: token, proxyId: 'plain' }));
      const secure = track(await startProxy({ controller: `https://127.0.0.1:${controller.port}`, tokenFile: token, caFile: tls.caFile, serverName: 'controller.test', proxyId: 'secure', gateway: 'gw2' }));
      await waitGeneration(plain, gatewayPort, '1');
      await eventually(async () => ((await secure.isReady()) ? true : undefined), `the TLS proxy ready:\n${secure.output()}`);
      assert.deepEqual(controller.distributor.proxies().map((p) => p.proxyId).sort(), ['plain', 'secure']);
    });
  });
});
