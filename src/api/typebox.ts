/**
 * TypeBox's values (the type builder, compiler, value functions, format registry and settings) for
 * this API, from one file bundled by esbuild (src/api/vendor/typebox.cjs, scripts/gen-typebox.ts) instead of
 * the package's 683 ES modules: the translator loads them on the config thread at start-up, and
 * Node's module loader costs per module, not per byte (~165 → ~20 ms of that thread's CPU; issue
 * 15, bench/RESULTS.md session 9). Types still come from the package (`import type … from
 * 'typebox'`): the bundle is the same version's code.
 *
 * Every value import of TypeBox in src/ goes through here, so there is one copy of its state: the
 * formats scalars.ts registers are the ones the compiled validators check, and the settings
 * validate.ts changes are the ones they read.
 */
import { createRequire } from 'node:module';
import type { Compile as CompileFunction } from 'typebox/compile';
import type TypeBuilder from 'typebox';
import type FormatRegistry from 'typebox/format';
import type SystemSettings from 'typebox/system';
import type ValueFunctions from 'typebox/value';

interface TypeBoxValues {
  readonly Type: typeof TypeBuilder;
  readonly Compile: typeof CompileFunction;
  readonly Value: typeof ValueFunctions;
  readonly Format: typeof FormatRegistry;
  readonly System: typeof SystemSettings;
}

const typebox = createRequire(import.meta.url)('./vendor/typebox.cjs') as TypeBoxValues;

export const Type = typebox.Type;
export const Compile = typebox.Compile;
export const Value = typebox.Value;
export const Format = typebox.Format;
export const System = typebox.System;
