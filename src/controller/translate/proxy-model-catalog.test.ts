import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MAX_CATALOG_BYTES, parseCatalog } from './proxy-model-catalog.ts';

describe('a model catalog source (ConfigMap data, JSON)', () => {
  const rows: { name: string; text: string; ids?: string[]; problem?: RegExp }[] = [
    { name: 'an array of entries', text: '[{"id":"a"},{"id":"b","owned_by":"x"}]', ids: ['a', 'b'] },
    { name: "OpenAI's /v1/models answer pasted as is", text: '{"object":"list","data":[{"id":"gpt-4o","object":"model","created":1,"owned_by":"openai"}]}', ids: ['gpt-4o'] },
    { name: "Anthropic's page pasted as is", text: '{"data":[{"type":"model","id":"claude","display_name":"Claude","created_at":"2025-02-19T00:00:00Z"}],"has_more":false}', ids: ['claude'] },
    { name: 'an object with "models"', text: '{"models":[{"id":"m"}]}', ids: ['m'] },
    { name: 'not JSON', text: '{nope', problem: /not JSON/ },
    { name: 'JSON of another shape', text: '{"items":[]}', problem: /expected a JSON array/ },
    { name: 'an entry without an id is dropped, the others kept', text: '[{"id":"ok"},{"name":"x"},{"id":""}]', ids: ['ok'], problem: /\[1\]: an entry needs an "id"/ },
    { name: 'an id over 1024 characters', text: JSON.stringify([{ id: 'x'.repeat(1025) }]), ids: [], problem: /1\.\.1024/ },
    { name: 'a source over 1 MiB is not read', text: JSON.stringify([{ id: 'a', pad: 'x'.repeat(MAX_CATALOG_BYTES) }]), ids: [], problem: /over 1048576 bytes/ },
  ];
  for (const row of rows) {
    it(row.name, () => {
      const read = parseCatalog(row.text, 'cm');
      if (row.ids) assert.deepEqual(read.entries.map((e) => e.id), row.ids);
      if (row.problem) assert.match(read.problems.join('\n'), row.problem);
      else assert.deepEqual(read.problems, []);
    });
  }

  it('reads created (Unix seconds) or created_at (RFC 3339), owned_by and display_name', () => {
    const [a, b] = parseCatalog('[{"id":"a","created":5,"owned_by":"o","display_name":"A"},{"id":"b","created_at":"1970-01-01T00:01:00Z"}]', 'cm').entries;
    assert.deepEqual(a, { id: 'a', ownedBy: 'o', created: 5, displayName: 'A' });
    assert.deepEqual(b, { id: 'b', created: 60 });
  });
});
