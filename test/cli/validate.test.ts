import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { REPO_ROOT, backendYaml, gatewayYaml, routeYaml, runCli, tempDir } from './harness.ts';

describe('switchboard validate / version / usage', () => {
  const dir = tempDir('validate');
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('accepts the quickstart', async () => {
    const result = await runCli(['validate', '-f', path.join(REPO_ROOT, 'examples/quickstart/config')]);
    assert.equal(result.code, 0, result.stdout + result.stderr);
    assert.match(result.stdout, /✓ valid \(4 objects in 3 files\)/);
  });

  it('reports every problem with file, document, object and field, and exits 1', async () => {
    const bad = path.join(dir, 'bad');
    fs.mkdirSync(bad);
    fs.writeFileSync(path.join(bad, 'a-gateway.yaml'), gatewayYaml(8080));
    fs.writeFileSync(path.join(bad, 'b-backend.yaml'), backendYaml(70000));
    // Route 1 points at a backend that is not in the files: a note. Route 2 names a listener that does not exist: an error.
    fs.writeFileSync(path.join(bad, 'c-routes.yaml'), `${routeYaml(1).replace('name: echo}]', 'name: elsewhere}]').replace('name: echo,', 'name: dangling,')}---\n${routeYaml(2).replace('name: echo,', 'name: wrong-section,').replace('[{name: gw}]', '[{name: gw, sectionName: nope}]')}`);
    fs.writeFileSync(path.join(bad, 'd-duplicate.yaml'), gatewayYaml(8080).split('---\n')[1]);
    fs.writeFileSync(path.join(bad, 'e-broken.yaml'), 'apiVersion: v1\nkind: Service\nmetadata:\n  name: [x\n');
    fs.writeFileSync(path.join(bad, 'f-no-name.yaml'), '---\napiVersion: v1\nkind: Service\nmetadata: {}\n');

    const result = await runCli(['validate', '-f', bad]);
    assert.equal(result.code, 1, result.stdout + result.stderr);
    const lines = result.stdout.split('\n');
    const line = (pattern: RegExp): string => lines.find((l) => pattern.test(l)) ?? assert.fail(`no line matches ${pattern} in:\n${result.stdout}`);
    assert.match(line(/e-broken\.yaml/), /^error .*e-broken\.yaml:[45]:\d+ \(document 0\): YAML syntax error/);
    assert.match(line(/f-no-name\.yaml/), /^error .*f-no-name\.yaml:2 \(document 0\) metadata\.name: metadata\.name is required/);
    assert.match(line(/d-duplicate\.yaml/), /^error .*d-duplicate\.yaml:1 \(document 0\) Gateway default\/gw: duplicate Gateway default\/gw: already declared at .*a-gateway\.yaml:6 \(document 1\)/);
    assert.match(line(/b-backend\.yaml.*ProxyBackend/), /^error .*b-backend\.yaml:1 \(document 0\) ProxyBackend default\/echo spec\.static\.port: /);
    assert.match(line(/HTTPRoute default\/wrong-section/), /^error .*c-routes\.yaml:\d+ \(document 1\) HTTPRoute default\/wrong-section status\.parents\[0\]: Accepted=False/);
    assert.match(line(/HTTPRoute default\/dangling/), /^note .*c-routes\.yaml:1 \(document 0\) HTTPRoute default\/dangling status\.parents\[0\]: ResolvedRefs=False \(BackendNotFound\)/);
    assert.match(result.stdout, /✗ \d+ errors, \d+ notes? \(/);
  });

  it('reports an alias bomb and an oversize file like any other error: exit 1, file named, no stack trace', async () => {
    const hostile = path.join(dir, 'hostile');
    fs.mkdirSync(hostile);
    fs.writeFileSync(path.join(hostile, 'a-gateway.yaml'), gatewayYaml(8080));
    const chain = ['apiVersion: v1', 'kind: ConfigMap', 'metadata: {name: bomb}', 'data:', '  k0: &a0 "x"'];
    for (let i = 1; i < 50_000; i++) chain.push(`  k${i}: &a${i} [*a${i - 1}]`);
    fs.writeFileSync(path.join(hostile, 'b-bomb.yaml'), `${chain.join('\n')}\n`);
    // Sparse: 17 MiB on disk in no time; refused by its size before anything is read.
    fs.writeFileSync(path.join(hostile, 'c-large.yaml'), '');
    fs.truncateSync(path.join(hostile, 'c-large.yaml'), 17 * 1024 * 1024);

    const result = await runCli(['validate', '-f', hostile], 30_000);
    assert.equal(result.code, 1, result.stdout + result.stderr);
    assert.equal(result.stderr, '');
    assert.doesNotMatch(result.stdout, /\n\s+at /);
    assert.match(result.stdout, /^error .*b-bomb\.yaml:\d+:\d+ \(document 0\): over a configuration limit: more than 1000 aliases in the file/m);
    assert.match(result.stdout, /^error .*c-large\.yaml: over a configuration limit: the file is 17 MiB, more than the 16 MiB a file may hold/m);
    assert.match(result.stdout, /✗ 2 errors/);
  });

  it('prints the version', async () => {
    const result = await runCli(['version']);
    const { version } = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string };
    assert.equal(result.code, 0);
    assert.equal(result.stdout, `switchboard ${version} (node ${process.version})\n`);
  });

  const usage = [
    { name: 'an unknown flag', args: ['run', '-f', 'x', '--frobnicate'], message: /^error: unknown flag --frobnicate\nRun "switchboard run --help" for usage\.\n$/ },
    { name: 'an unknown command', args: ['serve'], message: /^error: unknown command "serve"/ },
    { name: 'validate without files', args: ['validate'], message: /at least one -f PATH/ },
  ];
  for (const c of usage) {
    it(`exits 2 on ${c.name}`, async () => {
      const result = await runCli(c.args);
      assert.equal(result.code, 2);
      assert.match(result.stderr, c.message);
    });
  }

  it('prints objects with their defaults and gates ProxyModel behind --enable-proxy-models', async () => {
    const dirWithModel = path.join(dir, 'model');
    fs.mkdirSync(dirWithModel);
    fs.writeFileSync(path.join(dirWithModel, 'objects.yaml'), [
      'apiVersion: switchboard.dev/v1alpha1\nkind: ProxyBackend\nmetadata: {name: api}\nspec:\n  static: {host: api.example.com, port: 443}\n  policies:\n    tcp: {keepalive: {}}\n',
      'apiVersion: switchboard.dev/v1alpha1\nkind: ProxyModel\nmetadata: {name: m}\nspec:\n  parentRefs: [{name: gw}]\n  provider: VendorA\n  bogusField: 1\n',
    ].join('---\n'));
    const gated = await runCli(['validate', '--show-defaults', '-f', dirWithModel]);
    assert.equal(gated.code, 0, gated.stdout + gated.stderr);
    assert.match(gated.stdout, /retries: 9\n\s+time: 180s\n\s+interval: 180s/);
    assert.match(gated.stdout, /^note .*ProxyModel m: ProxyModel is disabled/m);
    const enabled = await runCli(['validate', '--enable-proxy-models', '-f', dirWithModel]);
    assert.equal(enabled.code, 1, enabled.stdout + enabled.stderr);
    assert.match(enabled.stdout, /^error .*ProxyModel m spec\.bogusField: unknown field/m);
  });

  it('prints the CRDs of every kind', async () => {
    const result = await runCli(['crds']);
    assert.equal(result.code, 0, result.stderr);
    const names = [...result.stdout.matchAll(/^ {2}name: (\S+)$/gm)].map((m) => m[1]).sort();
    assert.deepEqual(names, ['proxybackends.switchboard.dev', 'proxymodels.switchboard.dev', 'proxyparameters.switchboard.dev', 'proxypolicies.switchboard.dev']);
  });

  for (const command of ['run', 'validate', 'version', 'crds']) {
    it(`answers ${command} --help`, async () => {
      const result = await runCli([command, '--help']);
      assert.equal(result.code, 0);
      assert.match(result.stdout, new RegExp(`^Usage: switchboard ${command}`));
    });
  }

  it('exits 1 when run cannot start (a path that does not exist)', async () => {
    const result = await runCli(['run', '-f', path.join(dir, 'missing'), '--admin-address', '127.0.0.1:0', '--metrics-address', '127.0.0.1:0', '--workers', '1', '--log-format', 'json']);
    assert.equal(result.code, 1);
    assert.match(result.stdout, /configuration path not found/);
  });
});
