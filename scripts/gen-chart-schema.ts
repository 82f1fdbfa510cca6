/**
 * Writes chart/values.schema.json from scripts/chart-values-schema.ts and copies the Grafana
 * dashboard into the chart (Helm's .Files reads only files inside the chart), so both stay in
 * step with their sources (npm run gen:chart-schema; test/chart/values-schema.test.ts checks).
 */
import { copyFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { chartValuesSchema } from './chart-values-schema.ts';

const root = join(import.meta.dirname, '..');
export const SCHEMA_FILE = join(root, 'chart', 'values.schema.json');
export const DASHBOARD_SOURCE = join(root, 'deploy', 'grafana', 'switchboard.json');
export const DASHBOARD_COPY = join(root, 'chart', 'dashboards', 'switchboard.json');

export function schemaText(): string {
  return `${JSON.stringify(chartValuesSchema(), null, 2)}\n`;
}

if (import.meta.main) {
  writeFileSync(SCHEMA_FILE, schemaText());
  copyFileSync(DASHBOARD_SOURCE, DASHBOARD_COPY);
  console.log(`wrote ${SCHEMA_FILE} and ${DASHBOARD_COPY}`);
}
