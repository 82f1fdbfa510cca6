/**
 * Loads the validation cases: multi-document YAML files under cases/, each document preceded by
 *   # valid: <name>            or   # invalid: <name>
 *   # expect: <path>: <message substring>      (one line per expected error; invalid cases)
 *   # expect-note: <path>: <message substring>
 *   # proxyModels: disabled    (validate as if the ProxyModel API were off; default on)
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';

export interface Expectation {
  path: string;
  message: string;
  severity: 'error' | 'note';
}

export interface ValidationCase {
  name: string;
  valid: boolean;
  object: unknown;
  expect: Expectation[];
  proxyModelsEnabled: boolean;
}

const CASES_DIR = join(import.meta.dirname, 'cases');

function parseExpectation(line: string, severity: Expectation['severity']): Expectation {
  // The path never contains ': ' (map keys with it would be quoted), so split at the first one.
  const at = line.indexOf(': ');
  if (at < 0) throw new Error(`expectation needs "<path>: <message>": ${line}`);
  const path = line.slice(0, at).trim();
  return { path: path === '.' ? '' : path, message: line.slice(at + 2).trim(), severity };
}

export function loadCases(): ValidationCase[] {
  const out: ValidationCase[] = [];
  for (const file of readdirSync(CASES_DIR).filter((f) => f.endsWith('.yaml')).sort()) {
    // Split the stream ourselves: the header comments of each document are the case's annotations.
    const docs = readFileSync(join(CASES_DIR, file), 'utf8').split(/^---$/m);
    docs.forEach((text, i) => {
      const comment = text.split('\n').map((l) => l.trim()).filter((l) => l.startsWith('#')).map((l) => l.replace(/^#\s?/, '')).join('\n');
      let name = '';
      let valid = true;
      let proxyModelsEnabled = true;
      const expect: Expectation[] = [];
      for (const raw of comment.split('\n')) {
        const line = raw.trim();
        const [, key, rest] = /^([a-z-]+):\s*(.*)$/i.exec(line) ?? [];
        if (key === 'valid' || key === 'invalid') { name = rest; valid = key === 'valid'; }
        else if (key === 'expect') expect.push(parseExpectation(rest, 'error'));
        else if (key === 'expect-note') expect.push(parseExpectation(rest, 'note'));
        else if (key === 'proxyModels') proxyModelsEnabled = rest !== 'disabled';
      }
      if (!name) throw new Error(`${file} document ${i}: starts with neither "# valid:" nor "# invalid:"`);
      if (!valid && expect.length === 0) throw new Error(`${file} document ${i} (${name}): an invalid case needs "# expect:" lines`);
      out.push({ name: `${file.replace(/\.yaml$/, '')}: ${name}`, valid, object: parse(text), expect, proxyModelsEnabled });
    });
  }
  return out;
}
