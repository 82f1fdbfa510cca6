import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { parseYamlFile } from './parse.ts';

const route = (name: string): string => `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata:
  name: ${name}
spec: {}
`;

describe('parseYamlFile', () => {
  it('reads every document and remembers file, document index and starting line', () => {
    const text = `# leading comment\n${route('a')}---\n${route('b')}`;
    const parsed = parseYamlFile(text, 'routes.yaml');
    assert.equal(parsed.syntaxOk, true);
    assert.deepEqual(parsed.problems, []);
    assert.deepEqual(parsed.objects.map((o) => [o.object.metadata.name, o.origin]), [
      ['a', { file: 'routes.yaml', document: 0, line: 2 }],
      ['b', { file: 'routes.yaml', document: 1, line: 8 }],
    ]);
  });

  it('skips empty documents and comment-only files silently', () => {
    assert.deepEqual(parseYamlFile('---\n---\n', 'a.yaml').objects, []);
    const commentOnly = parseYamlFile('# nothing here\n', 'b.yaml');
    assert.equal(commentOnly.syntaxOk, true);
    assert.deepEqual(commentOnly.problems, []);
    assert.deepEqual(parseYamlFile(`---\n${route('x')}---\n`, 'c.yaml').objects.map((o) => o.object.metadata.name), ['x']);
  });

  it('reports a syntax error with its line and column and returns no objects from that file', () => {
    const text = `${route('a')}---\nkind: HTTPRoute\nmetadata:\n  name: [broken\n`;
    const parsed = parseYamlFile(text, 'bad.yaml');
    assert.equal(parsed.syntaxOk, false);
    assert.deepEqual(parsed.objects, []);
    assert.ok(parsed.problems.length >= 1);
    const problem = parsed.problems[0];
    assert.equal(problem.file, 'bad.yaml');
    assert.equal(problem.document, 1);
    assert.equal(problem.severity, 'error');
    assert.ok(problem.line !== undefined && problem.line >= 9, `line ${problem.line}`);
    assert.ok(problem.column !== undefined && problem.column >= 1);
    assert.match(problem.message, /^YAML syntax error: /);
  });

  const envelopeCases = [
    { name: 'a scalar document', doc: 'just a string\n', path: undefined, message: /not an object/ },
    { name: 'a list document', doc: '- a\n- b\n', path: undefined, message: /not an object/ },
    { name: 'no apiVersion', doc: 'kind: Gateway\nmetadata: {name: g}\n', path: 'apiVersion', message: /apiVersion is required/ },
    { name: 'no kind', doc: 'apiVersion: v1\nmetadata: {name: g}\n', path: 'kind', message: /kind is required/ },
    { name: 'no metadata', doc: 'apiVersion: v1\nkind: Service\n', path: 'metadata', message: /metadata is required/ },
    { name: 'no name', doc: 'apiVersion: v1\nkind: Service\nmetadata: {namespace: x}\n', path: 'metadata.name', message: /metadata.name is required/ },
    { name: 'empty namespace', doc: 'apiVersion: v1\nkind: Service\nmetadata: {name: s, namespace: ""}\n', path: 'metadata.namespace', message: /namespace must be/ },
  ];
  for (const c of envelopeCases) {
    it(`reports ${c.name} with file and document, keeping the other documents`, () => {
      const parsed = parseYamlFile(`${route('ok')}---\n${c.doc}`, 'mixed.yaml');
      assert.equal(parsed.syntaxOk, true);
      assert.deepEqual(parsed.objects.map((o) => o.object.metadata.name), ['ok']);
      assert.equal(parsed.problems.length, 1);
      assert.equal(parsed.problems[0].file, 'mixed.yaml');
      assert.equal(parsed.problems[0].document, 1);
      assert.equal(parsed.problems[0].line, 7);
      assert.equal(parsed.problems[0].path, c.path);
      assert.match(parsed.problems[0].message, c.message);
    });
  }

  it('drops objects of kinds the gateway does not read and names those kinds', () => {
    const text = `apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\n---\napiVersion: v1\nkind: Service\nmetadata: {name: s}\n---\napiVersion: example.com/v1\nkind: Gateway\nmetadata: {name: wrong-group}\n`;
    const parsed = parseYamlFile(text, 'k.yaml');
    assert.deepEqual(parsed.objects.map((o) => o.object.kind), ['Service']);
    assert.deepEqual([...parsed.ignoredKinds].sort(), ['apps/Deployment', 'example.com/Gateway']);
    assert.deepEqual(parsed.problems, []);
  });

  it('reports an unknown kind in our own group as an error: it is a typo, not a foreign object', () => {
    const parsed = parseYamlFile('apiVersion: switchboard.dev/v1alpha1\nkind: ProxyBackends\nmetadata: {name: b}\n', 'typo.yaml');
    assert.deepEqual(parsed.objects, []);
    assert.equal(parsed.problems.length, 1);
    assert.equal(parsed.problems[0].path, 'kind');
    assert.match(parsed.problems[0].message, /unknown kind ProxyBackends in switchboard.dev/);
  });

  it('loads yaml only for a file the fast path does not take', () => {
    // In a fresh process: whether any of yaml's modules was loaded after parsing `text`.
    const yamlLoaded = (text: string): boolean => {
      const probe = `data:text/javascript,import module from 'node:module'; const urls = []; module.registerHooks({ load(url, context, next) { urls.push(url); return next(url, context); } }); process.on('exit', () => process.stdout.write(String(urls.some((u) => u.includes('/node_modules/yaml/')))));`;
      const parse = fileURLToPath(new URL('./parse.ts', import.meta.url));
      const child = spawnSync(process.execPath, ['--import', probe, '--input-type=module', '-e', `const { parseYamlFile } = await import(${JSON.stringify(parse)}); if (parseYamlFile(${JSON.stringify(text)}, 'f.yaml').objects.length !== 1) process.exit(3);`], { encoding: 'utf8' });
      assert.equal(child.status, 0, child.stderr);
      return child.stdout === 'true';
    };
    assert.equal(yamlLoaded(route('plain')), false, 'plain YAML: the fast path alone');
    assert.equal(yamlLoaded(route('anchored').replace('spec: {}', 'spec: &s {}')), true, 'an anchor: yaml reads it');
  });
});
