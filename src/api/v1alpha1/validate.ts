/**
 * Validation of our objects: apiVersion and kind, the typebox schema, then the cross-field rules.
 * Returns every issue at once and never throws.
 */
import type { Validator } from 'typebox/compile';
import { Compile, System, Value } from '../typebox.ts';
import type { TSchema } from 'typebox';
import { API_VERSION, GROUP, KIND_SCHEMAS, PROXY_KINDS, isProxyKind } from './kinds.ts';
import type { ProxyKind } from './kinds.ts';
import { dedupe, translateErrors } from './issues.ts';
import type { ApiIssue } from './issues.ts';
import { ruleSites, rulePath } from './schema/walk.ts';
import { has } from './schema/rules.ts';

export type { ApiIssue };
export { isProxyKind };

export interface ValidateOptions {
  /** ProxyModel is experimental; when false (the default) a ProxyModel is ignored with a note. */
  proxyModelsEnabled?: boolean;
}

/** Typebox stops collecting after `maxErrors` (default 8); users should see every mistake at once. */
const MAX_ISSUES = 200;
export const PROXY_MODEL_DISABLED_NOTE = 'ProxyModel is disabled (enable with --enable-proxy-models / chart value proxyModels.enabled); object ignored';

const validators = new Map<ProxyKind, Validator>();
function validatorFor(kind: ProxyKind): Validator {
  let v = validators.get(kind);
  if (!v) {
    v = Compile(KIND_SCHEMAS[kind]) as unknown as Validator;
    validators.set(kind, v);
  }
  return v;
}

function schemaIssues(kind: ProxyKind, obj: unknown): ApiIssue[] {
  const validator = validatorFor(kind);
  if (validator.Check(obj)) return [];
  const previous = System.Settings.Get().maxErrors;
  System.Settings.Set({ maxErrors: MAX_ISSUES });
  try {
    return translateErrors(validator.Errors(obj), KIND_SCHEMAS[kind], obj);
  } finally {
    System.Settings.Set({ maxErrors: previous });
  }
}

function describeMembers(self: unknown, members: readonly string[]): string {
  const found = members.filter((m) => has(self, m));
  if (found.length === 0) return 'found none';
  return `found ${found.length === 1 ? found[0] : `${found.slice(0, -1).join(', ')} and ${found[found.length - 1]}`}`;
}

/** Cross-field rule issues; a rule whose node is malformed (already reported by the schema) is skipped. */
export function ruleIssues(schema: TSchema, obj: unknown): ApiIssue[] {
  const out: ApiIssue[] = [];
  for (const { rule, self, path } of ruleSites(schema, obj)) {
    let ok: boolean;
    try {
      ok = rule.check(self);
    } catch {
      continue;
    }
    if (ok) continue;
    const message = rule.members ? `${rule.message}, ${describeMembers(self, rule.members)}` : rule.message;
    out.push({ path: rulePath(path, rule), message, severity: 'error' });
  }
  return out;
}

function envelopeIssues(obj: unknown): ApiIssue[] | ProxyKind {
  if (typeof obj !== 'object' || obj === null || Array.isArray(obj)) return [{ path: '', message: 'must be an object', severity: 'error' }];
  const { apiVersion, kind } = obj as { apiVersion?: unknown; kind?: unknown };
  if (typeof apiVersion !== 'string') return [{ path: 'apiVersion', message: `is required (${API_VERSION})`, severity: 'error' }];
  if (apiVersion !== API_VERSION) {
    const hint = apiVersion.startsWith(`${GROUP}/`) ? `unsupported version of ${GROUP}` : `not an apiVersion of ${GROUP}`;
    return [{ path: 'apiVersion', message: `${hint}: ${JSON.stringify(apiVersion)}; supported: ${API_VERSION}`, severity: 'error' }];
  }
  if (typeof kind !== 'string' || !(PROXY_KINDS as readonly string[]).includes(kind)) {
    return [{ path: 'kind', message: `unknown kind ${JSON.stringify(kind)} in ${API_VERSION}; supported: ${PROXY_KINDS.join(', ')}`, severity: 'error' }];
  }
  return kind as ProxyKind;
}

/** Validates one object of our group: apiVersion/kind known, schema, cross-field rules. All issues at once, never throws. */
export function validateProxyObject(obj: unknown, opts: ValidateOptions = {}): ApiIssue[] {
  try {
    const kind = envelopeIssues(obj);
    if (Array.isArray(kind)) return kind;
    if ((kind === 'ProxyModel' || kind === 'ProxyModelList') && !opts.proxyModelsEnabled) {
      return [{ path: '', message: PROXY_MODEL_DISABLED_NOTE, severity: 'note' }];
    }
    const issues = [...schemaIssues(kind, obj), ...ruleIssues(KIND_SCHEMAS[kind], obj)];
    if (kind === 'ProxyModelList') {
      ((obj as { items?: unknown[] }).items ?? []).forEach((item, i) => {
        const { apiVersion, kind: itemKind } = (item ?? {}) as { apiVersion?: unknown; kind?: unknown };
        if (apiVersion !== API_VERSION) issues.push({ path: `items[${i}].apiVersion`, message: `must be ${API_VERSION}`, severity: 'error' });
        if (itemKind !== 'ProxyModel') issues.push({ path: `items[${i}].kind`, message: 'must be ProxyModel', severity: 'error' });
      });
    }
    return dedupe(issues);
  } catch (e) {
    // A throw here is a bug in this module; report it as an issue rather than take the caller down.
    return [{ path: '', message: `internal validation error: ${e instanceof Error ? e.message : String(e)}`, severity: 'error' }];
  }
}

/** A copy of `obj` with the schema defaults of its kind filled in (as the Kubernetes API server would). */
export function applyDefaults<T>(obj: T): T {
  const copy = structuredClone(obj);
  if (typeof copy !== 'object' || copy === null) return copy;
  const { apiVersion, kind } = copy as { apiVersion?: unknown; kind?: unknown };
  if (typeof apiVersion !== 'string' || typeof kind !== 'string' || !isProxyKind(apiVersion, kind)) return copy;
  return Value.Default(KIND_SCHEMAS[kind as ProxyKind], copy) as T;
}
