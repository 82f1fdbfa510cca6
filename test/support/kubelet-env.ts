/**
 * The environment a container gets from its `env` list, as the kubelet makes it: entries in order,
 * each value with `$(VAR)` replaced by an earlier entry's value (left as written when VAR is not
 * defined earlier), `$$` turned into a literal `$` (so `$$(VAR)` stays `$(VAR)`), and `valueFrom`
 * field references resolved from the pod's own fields. Follows Kubernetes'
 * third_party/forked/golang/expansion (Expand, tryReadVariableName); secret/configMap refs are
 * not resolved (a test passes what it needs in `fields`).
 */
export interface EnvEntry {
  readonly name: string;
  readonly value?: string;
  readonly valueFrom?: { readonly fieldRef?: { readonly fieldPath: string } };
}

export function kubeletEnv(entries: readonly EnvEntry[], fields: Readonly<Record<string, string>> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const entry of entries) {
    if (entry.valueFrom?.fieldRef) {
      const value = fields[entry.valueFrom.fieldRef.fieldPath];
      if (value !== undefined) env[entry.name] = value;
      continue;
    }
    env[entry.name] = expand(entry.value ?? '', (name) => (Object.hasOwn(env, name) ? env[name]! : `$(${name})`));
  }
  return env;
}

/** Kubernetes' expansion.Expand. */
export function expand(input: string, mapping: (name: string) => string): string {
  let out = '';
  let checkpoint = 0;
  for (let cursor = 0; cursor < input.length; cursor++) {
    if (input[cursor] !== '$' || cursor + 1 >= input.length) continue;
    out += input.slice(checkpoint, cursor);
    const rest = input.slice(cursor + 1);
    let advance = 1;
    if (rest[0] === '$') {
      out += '$';
    } else if (rest[0] === '(') {
      const close = rest.indexOf(')');
      if (close < 0) out += '$(';
      else {
        out += mapping(rest.slice(1, close));
        advance = close + 1;
      }
    } else {
      out += `$${rest[0]}`;
    }
    cursor += advance;
    checkpoint = cursor + 1;
  }
  return out + input.slice(checkpoint);
}
