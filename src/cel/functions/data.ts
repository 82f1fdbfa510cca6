import { EvaluationError } from '@marcbachmann/cel-js';
import type { Environment } from '@marcbachmann/cel-js';
import { celError } from '../cel-internals.ts';
import type { CelType, EvaluatorLike, MacroHooks, TypeCheckerLike } from '../cel-internals.ts';
import { asBytes, toCel, toJsonValue } from '../values.ts';

/** JSON, base64 and small general-purpose helpers (random sampling, defaults for missing data). */

function parseJson(text: string): unknown {
  try {
    return toCel(JSON.parse(text));
  } catch (err) {
    throw celError('invalid_json', `json(): ${(err as Error).message}`);
  }
}

function utf8(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
}

/** Receiver of `base64.encode(…)` / `base64.decode(…)`: CEL has no namespaces, so a constant stands in. */
class Base64Namespace {}

const BASE64_PATTERN = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}(?:==)?|[A-Za-z0-9+/]{3}=?)?$/;
const BASE64URL_PATTERN = /^[A-Za-z0-9_-]*$/;

function decodeBase64(text: string): Uint8Array {
  // Buffer.from silently skips invalid characters; an expression should fail on them instead.
  const urlSafe = !BASE64_PATTERN.test(text);
  if (urlSafe && !BASE64URL_PATTERN.test(text)) throw celError('invalid_argument', 'base64.decode(): input is not base64');
  return asBytes(Buffer.from(text, urlSafe ? 'base64url' : 'base64'));
}

export function registerDataFunctions(env: Environment): void {
  env.registerFunction('json(string): dyn', parseJson, {
    description: 'Parses JSON; whole numbers become int, other numbers double.',
  });
  env.registerFunction('json(bytes): dyn', (b: Uint8Array) => parseJson(utf8(b)), {
    description: 'Parses a UTF-8 JSON body, e.g. json(request.body).model.',
  });
  env.registerFunction('toJson(dyn): string', (v: unknown) => {
    try {
      return JSON.stringify(toJsonValue(v));
    } catch (err) {
      throw celError('invalid_argument', `toJson(): ${(err as Error).message}`);
    }
  }, { description: 'Serialises a value as JSON (bytes as base64, timestamps RFC 3339, durations "1.5s").' });

  env.registerType('switchboard.Base64', Base64Namespace);
  env.registerConstant('base64', 'switchboard.Base64', new Base64Namespace());
  env.registerFunction('switchboard.Base64.encode(bytes): string', (_ns: Base64Namespace, b: Uint8Array) =>
    Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('base64'), { description: 'Standard base64 with padding.' });
  env.registerFunction('switchboard.Base64.encode(string): string', (_ns: Base64Namespace, s: string) =>
    Buffer.from(s, 'utf8').toString('base64'), { description: 'Base64 of the UTF-8 bytes of the string.' });
  env.registerFunction('switchboard.Base64.decode(string): bytes', (_ns: Base64Namespace, s: string) => decodeBase64(s), {
    description: 'Decodes standard or URL-safe base64, padded or not; use string(…) for text.',
  });

  // cel-spec conversions the library lacks.
  env.registerFunction('string(google.protobuf.Duration): string', (d: { toString(): string }) => d.toString());
  env.registerFunction('string(google.protobuf.Timestamp): string', (t: Date) => t.toISOString().replace('.000Z', 'Z'));

  env.registerFunction('random(): double', () => Math.random(), {
    description: 'A uniformly distributed double in [0, 1), for sampling: random() < 0.1.',
  });

  env.registerFunction('default(ast, ast): dyn', ({ args }: { args: [never, never] }) => defaultMacro(args[0], args[1]), {
    description: 'default(expr, fallback): expr, or fallback when expr fails or is null (e.g. a missing header).',
  });
}

function defaultMacro(value: Parameters<EvaluatorLike['run']>[0], fallback: Parameters<EvaluatorLike['run']>[0]): MacroHooks {
  return {
    async: false,
    typeCheck(checker: TypeCheckerLike, _macro: MacroHooks, ctx: unknown): CelType {
      const a = checker.check(value, ctx);
      const b = checker.check(fallback, ctx);
      return a.name === b.name ? a : checker.getType('dyn');
    },
    evaluate(evaluator: EvaluatorLike, _macro: MacroHooks, ctx: unknown): unknown {
      try {
        const v = evaluator.run(value, ctx);
        if (v !== null && v !== undefined) return v;
      } catch (err) {
        if (!(err instanceof EvaluationError)) throw err;
      }
      return evaluator.run(fallback, ctx);
    },
  };
}
