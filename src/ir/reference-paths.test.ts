import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ProxyBackendSpec } from '../api/v1alpha1/backend/proxy-backend.ts';
import { ProxyPolicySpec } from '../api/v1alpha1/policy/proxy-policy.ts';
import { REFERENCE_PATHS } from './reference-paths.ts';
import { referencePaths } from './references.ts';

/**
 * The written-out reference paths must be exactly the endpoint `backendRef` positions the API
 * schemas declare (what the translator's schema-driven lowering turns into `backendKey`): a
 * backendRef added to the API and not to reference-paths.ts would be neither validated nor
 * followed when a remote proxy's slice is cut.
 */
type Schema = Record<string, unknown>;
const isDict = (value: unknown): value is Schema => typeof value === 'object' && value !== null && !Array.isArray(value);
const propertiesOf = (schema: unknown): Schema => (isDict(schema) && isDict(schema.properties) ? schema.properties : {});
const propertyKeys = (schema: Schema): string => Object.keys(propertiesOf(schema)).sort().join(',');
/** The BackendObjectReference shape lower() resolves into a `backendKey`. */
const isBackendRef = (schema: unknown): boolean => isDict(schema) && propertyKeys(schema) === 'group,kind,name,namespace,port';

/** Every path from `schema` to an endpoint backendRef, as `….backendKey` (arrays transparent, `*` for a map's entries). */
function schemaPaths(schema: unknown, prefix: string[] = [], out: string[] = [], depth = 0): string[] {
  if (!isDict(schema) || depth > 40) return out;
  for (const union of ['anyOf', 'oneOf', 'allOf']) {
    const branches = schema[union];
    if (Array.isArray(branches)) for (const branch of branches) schemaPaths(branch, prefix, out, depth + 1);
  }
  if (schema.items !== undefined) schemaPaths(schema.items, prefix, out, depth + 1);
  if (isDict(schema.patternProperties)) for (const entry of Object.values(schema.patternProperties)) schemaPaths(entry, [...prefix, '*'], out, depth + 1);
  for (const [key, property] of Object.entries(propertiesOf(schema))) {
    if (key === 'backendRef' && isBackendRef(property)) out.push([...prefix, 'backendKey'].join('.'));
    else schemaPaths(property, [...prefix, key], out, depth + 1);
  }
  return out;
}

const sortedUnique = (paths: readonly string[]): string[] => [...new Set(paths)].sort();
const policy = propertiesOf(ProxyPolicySpec);

describe('reference paths: the written list equals what the API schemas declare', () => {
  const rows = [
    { name: 'traffic members', written: REFERENCE_PATHS.traffic, derived: schemaPaths(policy.traffic) },
    { name: 'frontend members', written: REFERENCE_PATHS.frontend, derived: schemaPaths(policy.frontend) },
    {
      name: 'backend members and a ProxyBackend\'s inline policies (+ the MCP guardrail processor, lowered by hand)',
      written: REFERENCE_PATHS.backend,
      derived: [...schemaPaths(policy.backend), ...schemaPaths(propertiesOf(ProxyBackendSpec).policies), 'mcp.guardrails.backendKey'],
    },
  ];
  for (const row of rows) {
    it(row.name, () => assert.deepEqual(sortedUnique(row.written), sortedUnique(row.derived)));
  }

  it('the walks use every written path, and only those', () => {
    const used = referencePaths();
    assert.deepEqual(sortedUnique(used.traffic), sortedUnique(REFERENCE_PATHS.traffic));
    assert.deepEqual(sortedUnique(used.frontend), sortedUnique(REFERENCE_PATHS.frontend));
    assert.deepEqual(sortedUnique(used.backend), sortedUnique(REFERENCE_PATHS.backend));
  });
});
