/**
 * CEL helpers shared by the external-service clients. The translator has already compiled every
 * expression (a bad one marks the policy invalid, and the pipeline fails closed before reaching a
 * client), so a compile failure here is a programming error and throws at construction.
 */
import { compile, evalString, evalValue } from '../../cel/index.ts';
import type { Activation, JsonValue, Program } from '../../cel/index.ts';

export function compileExpression(expression: string, what: string): Program {
  const result = compile(expression);
  if (!result.ok) throw new Error(`${what}: invalid CEL expression: ${result.error.message}`);
  return result.program;
}

/** name → compiled program, in the map's order. */
export function compileMap(map: Readonly<Record<string, string>> | undefined, what: string): ReadonlyMap<string, Program> {
  const out = new Map<string, Program>();
  for (const [name, expression] of Object.entries(map ?? {})) out.set(name, compileExpression(expression, `${what}.${name}`));
  return out;
}

/** Each program's JSON value; a failing expression leaves its key out (the request goes on). */
export function evalValues(programs: ReadonlyMap<string, Program>, activation: Activation): { [key: string]: JsonValue } {
  const out: { [key: string]: JsonValue } = {};
  for (const [name, program] of programs) {
    const result = evalValue(program, activation);
    if (result.ok) out[name] = result.value;
  }
  return out;
}

/** Each program's text (header values); a failing expression leaves its header out. */
export function evalStrings(programs: ReadonlyMap<string, Program>, activation: Activation): [string, string][] {
  const out: [string, string][] = [];
  for (const [name, program] of programs) {
    const result = evalString(program, activation);
    if (result.ok) out.push([name, result.value]);
  }
  return out;
}
