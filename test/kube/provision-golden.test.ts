/**
 * Provisioning golden tests: each test/kube/golden/provision/<case>.yaml holds input objects
 * (GatewayClass, Gateway, ProxyParameters) as YAML documents, then a `# Output` document holding,
 * per Gateway of our class, the exact objects the controller applies — or the reason it does not.
 * A `kind: TestContext` document sets what the controller's environment would (its CA, image).
 * `UPDATE_GOLDEN=1` rewrites the Output documents.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, parseAllDocuments, stringify } from 'yaml';
import type { KubeObject } from '../../src/api/gateway/object.ts';
import { attachedListenerSets } from '../../src/controller/kube/provision/listener-sets.ts';
import { provisionObjects } from '../../src/controller/kube/provision/objects.ts';
import { resolveParameters } from '../../src/controller/kube/provision/parameters.ts';

const ROOT = join(import.meta.dirname, 'golden', 'provision');
const OUTPUT_MARKER = /^---[ \t]*\r?\n# Output[^\n]*\n/m;
const CONTROLLER_NAME = 'switchboard.dev/gateway-controller';
const CONTEXT = { controllerUrl: 'https://switchboard.switchboard-system.svc:9978', defaultTag: '0.1.0' };
const update = process.env.UPDATE_GOLDEN === '1';

/** A document `kind: TestContext` in a case overrides the context (the controller's environment). */
function provision(all: readonly KubeObject[]): unknown[] {
  const override = all.find((o) => o.kind === 'TestContext') as { context?: object } | undefined;
  const context = { ...CONTEXT, ...override?.context };
  const objects = all.filter((o) => o.kind !== 'TestContext');
  const parameters = new Map(objects.filter((o) => o.kind === 'ProxyParameters').map((o) => [`${o.metadata.namespace ?? 'default'}/${o.metadata.name}`, o]));
  const classes = new Map(objects.filter((o) => o.kind === 'GatewayClass' && (o.spec as { controllerName?: string }).controllerName === CONTROLLER_NAME).map((o) => [o.metadata.name, o]));
  return objects.filter((o) => o.kind === 'Gateway').flatMap((gateway): unknown[] => {
    const gatewayClass = classes.get((gateway.spec as { gatewayClassName: string }).gatewayClassName);
    if (!gatewayClass) return [];
    const id = `${gateway.metadata.namespace ?? 'default'}/${gateway.metadata.name}`;
    const resolved = resolveParameters(gatewayClass, gateway, parameters);
    if (!resolved.ok) return [{ gateway: id, notProvisioned: { reason: resolved.reason, message: resolved.message } }];
    try {
      return [{ gateway: id, objects: provisionObjects(gateway, resolved.parameters, context, attachedListenerSets(gateway, objects)) }];
    } catch (err) {
      return [{ gateway: id, notProvisioned: { reason: 'InvalidParameters', message: (err as Error).message } }];
    }
  });
}

describe('golden provisioning', () => {
  const files = readdirSync(ROOT).filter((f) => f.endsWith('.yaml')).sort();
  it('has cases', () => assert.ok(files.length > 0));
  for (const file of files) {
    it(file, () => {
      const text = readFileSync(join(ROOT, file), 'utf8');
      const marker = OUTPUT_MARKER.exec(text);
      const input = marker ? text.slice(0, marker.index) : text;
      const objects = parseAllDocuments(input).flatMap((doc) => {
        if (doc.errors.length > 0) throw new Error(`${file}: ${doc.errors[0]!.message}`);
        const value: unknown = doc.toJS();
        return value === null || value === undefined ? [] : [value as KubeObject];
      });
      const actual = JSON.parse(JSON.stringify(provision(objects))) as unknown;
      if (update) {
        writeFileSync(join(ROOT, file), `${input.trimEnd()}\n---\n# Output\n${stringify(actual, { lineWidth: 0 })}`);
        return;
      }
      assert.ok(marker, `${file} has no "# Output" document; run with UPDATE_GOLDEN=1 to create it`);
      assert.deepEqual(actual, parse(text.slice(marker.index + marker[0].length)));
    });
  }
});
