/**
 * Where in a ProxyConfig a problem is, for src/ir/validate.ts: a chain of property names and
 * indexes that becomes text (`routes["ns/r"].rules[0].backends[1].backendKey`) only when a problem
 * is reported there. A clean config reports nothing, so none of its paths is ever written out:
 * building each one's string as the walk went (a regular expression test and a concatenation per
 * step) was most of the check's cost at 10k routes, on the serving thread before the first config
 * could compile (issue 15: time to ready).
 */
export interface IrPath {
  readonly base: IrPath | undefined;
  readonly key: string | number;
}

/** A top-level member of the config: `binds`, `routes`, `backends`. */
export const root = (name: string): IrPath => ({ base: undefined, key: name });

/** `base` and then one property or index. */
export const at = (base: IrPath, key: string | number): IrPath => ({ base, key });

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

/** JavaScript property-access form: `.name` for an identifier, `[0]` for an index, `["a/b"]` otherwise. */
export function renderPath(path: IrPath): string {
  const keys: (string | number)[] = [];
  for (let p: IrPath | undefined = path; p; p = p.base) keys.push(p.key);
  let text = String(keys.pop());
  for (let i = keys.length - 1; i >= 0; i--) {
    const key = keys[i] as string | number;
    text += typeof key === 'number' ? `[${key}]` : IDENTIFIER.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`;
  }
  return text;
}
