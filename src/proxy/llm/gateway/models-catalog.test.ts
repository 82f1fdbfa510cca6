import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseModelPattern, type ModelPattern } from '../../../common/model-match.ts';
import type { ModelCatalogEntryIR, ModelRouteIR } from '../../../ir/ai.ts';
import { catalogAnswers } from './models-catalog.ts';

const model = (id: string, match: string, visibility: 'Public' | 'Internal' = 'Public'): ModelRouteIR => ({ id, pattern: parseModelPattern(match, id) as ModelPattern, visibility, groups: [] });

const MODELS = [model('ns/gpt-4o', 'gpt-4o'), model('ns/gpt', 'gpt-*'), model('ns/secret', 'secret-*', 'Internal'), model('ns/o1', 'o1')];
const CATALOG: ModelCatalogEntryIR[] = [
  { id: 'gpt-4o', ownedBy: 'openai', created: 1715367049, displayName: 'GPT-4o' },
  { id: 'gpt-4o-mini' },
  { id: 'secret-model' },
  { id: 'claude-sonnet-4', ownedBy: 'anthropic' },
];

describe('/v1/models of a models rule: exact Public models and the catalog entries a client could request', () => {
  const rows: { name: string; models: ModelRouteIR[]; catalog: ModelCatalogEntryIR[]; ids: string[] }[] = [
    { name: 'no catalog: the exact Public names', models: MODELS, catalog: [], ids: ['gpt-4o', 'o1'] },
    { name: 'a catalog entry a wildcard Public model serves is listed; Internal-only and unmatched ids are not', models: MODELS, catalog: CATALOG, ids: ['gpt-4o', 'gpt-4o-mini', 'o1'] },
    { name: 'a "*" Public model makes every entry requestable', models: [...MODELS, model('ns/rest', '*')], catalog: CATALOG, ids: ['claude-sonnet-4', 'gpt-4o', 'gpt-4o-mini', 'o1', 'secret-model'] },
  ];
  for (const row of rows) {
    it(row.name, () => {
      const openai = JSON.parse(Buffer.from(catalogAnswers(row.models, row.catalog).openai).toString()) as { data: { id: string }[] };
      assert.deepEqual(openai.data.map((m) => m.id), row.ids);
    });
  }

  it('carries the catalog metadata in both shapes', () => {
    const answers = catalogAnswers(MODELS, CATALOG);
    const openai = JSON.parse(Buffer.from(answers.openai).toString()) as { data: { id: string; owned_by: string; created: number }[] };
    assert.deepEqual(openai.data[0], { id: 'gpt-4o', object: 'model', created: 1715367049, owned_by: 'openai' });
    assert.deepEqual(openai.data[1], { id: 'gpt-4o-mini', object: 'model', created: 0, owned_by: 'switchboard' });
    const page = JSON.parse(Buffer.from(answers.anthropic).toString()) as { data: { id: string; display_name: string; created_at: string }[]; first_id: string; last_id: string };
    assert.deepEqual(page.data[0], { type: 'model', id: 'gpt-4o', display_name: 'GPT-4o', created_at: '2024-05-10T18:50:49Z' });
    assert.deepEqual([page.first_id, page.last_id], ['gpt-4o', 'o1']);
  });
});
