import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { anthropicModelList, openAIModelList, type ModelsSource } from './models.ts';

const at = 1_700_000_000;

describe('the /v1/models answer from configuration', () => {
  const rows: { name: string; sources: ModelsSource | ModelsSource[]; ids: [string, string][] }[] = [
    { name: 'one provider: its pinned model, then each alias and its target', sources: { providerModel: 'gpt-4o', aliases: { fast: 'gpt-4o-mini' }, ownedBy: 'providerA', created: at }, ids: [['gpt-4o', 'providerA'], ['fast', 'providerA'], ['gpt-4o-mini', 'providerA']] },
    { name: 'nothing pinned, no aliases: an empty list', sources: { ownedBy: 'providerA', created: at }, ids: [] },
    {
      name: 'a group: the union in the group\'s order, each id once, owned by its first provider',
      sources: [
        { providerModel: 'gpt-4o', ownedBy: 'providerA', created: at },
        { providerModel: 'claude-sonnet-4-5', aliases: { smart: 'gpt-4o' }, ownedBy: 'providerD', created: at },
        { providerModel: 'gpt-4o', ownedBy: 'providerE', created: at },
      ],
      ids: [['gpt-4o', 'providerA'], ['claude-sonnet-4-5', 'providerD'], ['smart', 'providerD']],
    },
  ];
  for (const row of rows) {
    it(row.name, () => {
      const list = openAIModelList(row.sources);
      assert.deepEqual(list.data.map((m) => [m.id, m.owned_by]), row.ids);
      const page = anthropicModelList(row.sources);
      assert.deepEqual(page.data.map((m) => m.id), row.ids.map(([id]) => id));
      assert.deepEqual([page.first_id, page.last_id], [row.ids[0]?.[0] ?? null, row.ids.at(-1)?.[0] ?? null]);
    });
  }
});
