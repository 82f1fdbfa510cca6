/**
 * Every ProxyModel golden case's translation is a configuration the proxy accepts: the IR check
 * the embedded gateway and remote clients run before publishing (src/ir/validate.ts) finds
 * nothing — a rule of models has no groups of its own, its models' providers (and their policies,
 * a tunnel's Service among the backends) are walked like a ProxyBackend's.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parseAllDocuments } from 'yaml';
import type { KubeObject } from '../../src/api/gateway/object.ts';
import { translate } from '../../src/controller/translate/index.ts';
import { validateConfig } from '../../src/ir/validate.ts';

const DIR = join(import.meta.dirname, '..', 'golden', 'proxy-model');
const OUTPUT_MARKER = /^---[ \t]*\r?\n# Output[^\n]*\n/m;

function inputOf(file: string): KubeObject[] {
  const text = readFileSync(join(DIR, file), 'utf8');
  const marker = OUTPUT_MARKER.exec(text);
  return parseAllDocuments(marker ? text.slice(0, marker.index) : text).flatMap((doc) => {
    const value: unknown = doc.toJS();
    return value === null || value === undefined ? [] : [value as KubeObject];
  });
}

const TUNNEL = `apiVersion: v1
kind: Service
metadata: { name: squid }
spec: { ports: [{ port: 3128 }] }
---
apiVersion: switchboard.dev/v1alpha1
kind: ProxyModel
metadata: { name: tunnelled }
spec:
  parentRefs: [{ group: gateway.networking.k8s.io, kind: HTTPRoute, name: models }]
  provider: VendorA
  policies: { tunnel: { backendRef: { name: squid, port: 3128 } } }
`;

describe('ProxyModel translations pass the IR check', () => {
  for (const file of readdirSync(DIR).filter((f) => f.endsWith('.yml')).sort()) {
    it(file, () => {
      const { config } = translate(inputOf(file), { proxyModels: true });
      assert.deepEqual(validateConfig(config), []);
    });
  }

  it('a model whose tunnel names a Service: the Service is a backend of the config', () => {
    const objects = [...inputOf('virtual.yml'), ...parseAllDocuments(TUNNEL).map((d) => d.toJS() as KubeObject)];
    const { config } = translate(objects, { proxyModels: true });
    assert.ok(config.backends['service/default/squid:3128'], Object.keys(config.backends).join(', '));
    assert.deepEqual(validateConfig(config), []);
  });
});
