import { styleText } from 'node:util';
import type { ValidateOptions } from '../args.ts';
import { collectFindings } from '../validate/findings.ts';
import { formatProblem } from '../validate/format.ts';
import { withDefaultsYaml } from '../validate/show-defaults.ts';

/** Prints every finding and returns the exit code: 1 when any is an error. */
export async function validate(options: ValidateOptions, out: NodeJS.WriteStream = process.stdout): Promise<number> {
  const { problems, files, objects, sourced } = await collectFindings(options.files, { proxyModelsEnabled: options.proxyModels });
  if (options.showDefaults) out.write(withDefaultsYaml(sourced));
  for (const problem of problems) out.write(`${formatProblem(problem, out)}\n`);
  const errors = problems.filter((p) => p.severity === 'error').length;
  const notes = problems.length - errors;
  const counted = `${objects} object${objects === 1 ? '' : 's'} in ${files} file${files === 1 ? '' : 's'}`;
  if (errors > 0) {
    out.write(`${styleText('red', `✗ ${errors} error${errors === 1 ? '' : 's'}`, { stream: out })}${notes ? `, ${notes} note${notes === 1 ? '' : 's'}` : ''} (${counted})\n`);
    return 1;
  }
  out.write(`${styleText('green', '✓ valid', { stream: out })} (${counted}${notes ? `, ${notes} note${notes === 1 ? '' : 's'}` : ''})\n`);
  return 0;
}
