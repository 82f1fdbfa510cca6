import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, it } from 'node:test';
import { parse } from 'yaml';
import { backendReferences, bindReferences, referencePaths, routeReferences } from './references.ts';
import type { ProxyConfig } from './types.ts';

const GOLDEN = join(import.meta.dirname, '../../test/golden');
const OUTPUT_MARKER = /^---[ \t]*\r?\n# Output[^\n]*\n/m;

function goldenFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? goldenFiles(join(dir, e.name)) : e.name.endsWith('.yaml') ? [join(dir, e.name)] : []))
    .sort();
}

function goldenConfig(file: string): ProxyConfig {
  const text = readFileSync(file, 'utf8');
  const marker = OUTPUT_MARKER.exec(text);
  assert.ok(marker, `${file} has no Output document`);
  return (parse(text.slice(marker.index + marker[0].length)) as { config: ProxyConfig }).config;
}

/** Every string `backendKey` property anywhere (the old, untyped reading), provenance and refused members aside. */
function anyBackendKey(value: unknown, into: Set<string>): Set<string> {
  if (Array.isArray(value)) for (const item of value) anyBackendKey(item, into);
  else if (typeof value === 'object' && value !== null) {
    for (const [key, child] of Object.entries(value)) {
      if (key === 'backendKey' && typeof child === 'string') into.add(child);
      else if (key !== 'sources' && key !== 'invalid') anyBackendKey(child, into);
    }
  }
  return into;
}

function typedReferences(config: ProxyConfig): Set<string> {
  const found = new Set<string>();
  const add = (key: string): void => void found.add(key);
  for (const bind of config.binds) bindReferences(bind, add);
  for (const route of Object.values(config.routes)) routeReferences(route, add);
  for (const backend of Object.values(config.backends)) backendReferences(backend, add);
  return found;
}

describe('references: the typed walk finds every reference a golden config holds', () => {
  const files = goldenFiles(GOLDEN);
  it('finds the golden cases', () => assert.ok(files.length > 20));
  for (const file of files) {
    it(relative(GOLDEN, file), () => {
      const config = goldenConfig(file);
      assert.deepEqual([...typedReferences(config)].sort(), [...anyBackendKey(config, new Set())].sort());
    });
  }
});

describe('references: positions come from the API schemas', () => {
  const paths = referencePaths();
  const rows: { name: string; list: string[]; has: string }[] = [
    { name: 'traffic extAuth', list: paths.traffic, has: 'extAuth.backendKey' },
    { name: 'traffic conditional extProc', list: paths.traffic, has: 'extProc.conditional.policy.backendKey' },
    { name: 'traffic rate-limit service', list: paths.traffic, has: 'rateLimit.global.backendKey' },
    { name: 'traffic remote JWKS', list: paths.traffic, has: 'jwtAuthentication.providers.jwks.remote.backendKey' },
    { name: 'frontend tracing', list: paths.frontend, has: 'tracing.backendKey' },
    { name: 'backend tunnel', list: paths.backend, has: 'tunnel.backendKey' },
    { name: 'backend token exchange', list: paths.backend, has: 'auth.oauthTokenExchange.backendKey' },
    { name: 'backend MCP guardrail processor (McpGuardrailIR, lowered by hand)', list: paths.backend, has: 'mcp.guardrails.backendKey' },
  ];
  for (const row of rows) it(row.name, () => assert.ok(row.list.includes(row.has), `${row.has} not in ${row.list.join(', ')}`));

  it('no position runs through a free-form field (jwtSign claims, transformation bodies, metadata)', () => {
    for (const path of [...paths.traffic, ...paths.frontend, ...paths.backend]) {
      assert.doesNotMatch(path, /(^|\.)(claims|body|metadata|jwtSign|transformation)(\.|$)/, path);
    }
  });
});
