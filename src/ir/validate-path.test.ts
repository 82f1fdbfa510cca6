import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { at, renderPath, root, type IrPath } from './validate-path.ts';

describe('renderPath: JavaScript property-access form', () => {
  const rows: { name: string; path: IrPath; text: string }[] = [
    { name: 'a top-level member alone', path: root('binds'), text: 'binds' },
    { name: 'an index', path: at(root('binds'), 3), text: 'binds[3]' },
    { name: 'an identifier as a property', path: at(at(at(root('binds'), 0), 'listeners'), 1), text: 'binds[0].listeners[1]' },
    { name: 'a key that is no identifier, quoted', path: at(at(root('routes'), 'ns/r'), 'key'), text: 'routes["ns/r"].key' },
    { name: 'a key with a quote, escaped', path: at(root('backends'), 'a"b'), text: 'backends["a\\"b"]' },
    { name: 'a key that starts with a digit, quoted', path: at(root('routes'), '1a'), text: 'routes["1a"]' },
    { name: '$ and _ are identifier characters', path: at(at(root('routes'), '$x_1'), 'rules'), text: 'routes.$x_1.rules' },
  ];
  for (const row of rows) it(row.name, () => assert.equal(renderPath(row.path), row.text));
});
