/**
 * docs/errors.md lists every code the gateway renders (issue 12 item 5): each `code` a ProxyError
 * is classified to (errors.ts) and each code a refusal is made with anywhere in src/proxy
 * (`respondError`, a GatewayError written for `jsonRpcGatewayError` / `renderGatewayError`) has its row, with the same status when the status is fixed.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, it } from 'node:test';

const ROOT = join(import.meta.dirname, '../../..');
const PROXY = join(ROOT, 'src/proxy');

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return e.name === 'gen' ? [] : sources(path);
    return e.name.endsWith('.ts') && !e.name.endsWith('.test.ts') ? [path] : [];
  });
}

/** `code` → status column of the "Every code" table (the status cell's first number, if any). */
function documented(): Map<string, string> {
  const text = readFileSync(join(ROOT, 'docs/errors.md'), 'utf8');
  const table = text.slice(text.indexOf('## Every code'));
  const rows = new Map<string, string>();
  for (const m of table.matchAll(/^\| `([a-z_]+)` \| ([^|]*) \|/gm)) rows.set(m[1], m[2].trim());
  return rows;
}

interface Made {
  readonly code: string;
  /** The literal status, or undefined when it is computed. */
  readonly status: string | undefined;
  readonly where: string;
}

function made(): Made[] {
  const out: Made[] = [];
  for (const file of sources(PROXY)) {
    const text = readFileSync(file, 'utf8');
    const where = relative(ROOT, file);
    for (const m of text.matchAll(/respondError\(\s*([^,]+?),\s*'([a-z_]+)'/g)) out.push({ code: m[2], status: /^\d+$/.test(m[1]) ? m[1] : undefined, where });
    // A GatewayError written in place for an answer rendered directly (MCP JSON-RPC errors).
    for (const m of text.matchAll(/(?:jsonRpcGatewayError|renderGatewayError)\(\s*([^,]+?),\s*\{\s*code:\s*'([a-z_]+)'/g)) out.push({ code: m[2], status: /^\d+$/.test(m[1]) ? m[1] : undefined, where });
  }
  const errors = readFileSync(join(PROXY, 'http/errors.ts'), 'utf8');
  for (const m of errors.matchAll(/\bof\((\d+), '([a-z_]+)'/g)) out.push({ code: m[2], status: m[1], where: 'src/proxy/http/errors.ts' });
  return out;
}

describe('docs/errors.md lists every gateway error code', () => {
  const rows = documented();
  const codes = made();
  it('finds the codes and the table', () => {
    assert.ok(rows.size > 20, `${rows.size} documented rows`);
    assert.ok(codes.some((c) => c.code === 'route_not_found') && codes.some((c) => c.code === 'rate_limited'));
  });
  for (const c of codes) {
    it(`${c.code} (${c.where})`, () => {
      const status = rows.get(c.code);
      assert.ok(status !== undefined, `${c.code} is made in ${c.where} but has no row in docs/errors.md "Every code"`);
      if (c.status !== undefined && /^\d+/.test(status)) assert.ok(status.includes(c.status), `${c.code}: docs say ${status}, ${c.where} answers ${c.status}`);
    });
  }
});
