import { styleText } from 'node:util';
import type { ConfigProblem } from '../../controller/sources/types.ts';

/**
 * One line per problem, most precise location first, in the `file:line:column` form editors and
 * terminals turn into links: `routes.yaml:12:3 (document 1) HTTPRoute default/chat spec.rules[0]: message`.
 */
export function formatProblem(problem: ConfigProblem, stream: NodeJS.WriteStream): string {
  const label = problem.severity === 'error' ? styleText(['red', 'bold'], 'error', { stream }) : styleText('cyan', 'note', { stream });
  const location = [problem.file ?? '<unknown file>', problem.line, problem.line !== undefined ? problem.column : undefined].filter((p) => p !== undefined).join(':');
  const parts = [styleText('bold', location, { stream })];
  if (problem.document !== undefined) parts.push(`(document ${problem.document})`);
  if (problem.object) parts.push(`${problem.object.kind} ${problem.object.namespace ? `${problem.object.namespace}/` : ''}${problem.object.name}`);
  if (problem.path) parts.push(styleText('dim', problem.path, { stream }));
  return `${label} ${parts.join(' ')}: ${problem.message}`;
}
