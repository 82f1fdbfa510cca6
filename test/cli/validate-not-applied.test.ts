import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { gatewayYaml, runCli, tempDir } from './harness.ts';

describe('switchboard validate: fields this gateway does not apply yet', () => {
  const dir = tempDir('validate-not-applied');
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('are notes naming the field and the issue, not errors: exit 0', async () => {
    fs.writeFileSync(path.join(dir, 'a-gateway.yaml'), gatewayYaml(8080));
    fs.writeFileSync(path.join(dir, 'b-policy.yaml'), `apiVersion: switchboard.dev/v1alpha1
kind: ProxyPolicy
metadata: {name: telemetry, namespace: default}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw}]
  frontend:
    tcp: {keepalive: {retries: 3}}
    http: {http1MaxHeaders: 50}
`);
    const result = await runCli(['validate', '-f', dir]);
    assert.equal(result.code, 0, result.stdout + result.stderr);
    assert.match(result.stdout, /^note .*b-policy\.yaml:1 \(document 0\) ProxyPolicy default\/telemetry status\.ancestors\[0\]: Accepted=False \(PartiallyApplied\): Not applied: spec\.frontend\.tcp\.keepalive\.retries: /m);
    assert.match(result.stdout, /✓ valid \(.*1 note\)/);
  });
});
