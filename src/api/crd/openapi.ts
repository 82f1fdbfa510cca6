/**
 * typebox schema → Kubernetes structural OpenAPI v3. Typebox-specific and our own keywords are
 * stripped; cross-field rules become x-kubernetes-validations; maps become additionalProperties.
 */
import { EXPECTED_KEYWORD, LOCAL_FORMATS, RULES_KEYWORD } from '../v1alpha1/schema/keywords.ts';
import type { CrossFieldRule } from '../v1alpha1/schema/rules.ts';

export type OpenAPISchema = Record<string, unknown>;

export interface KubernetesValidation {
  rule: string;
  message: string;
  fieldPath?: string;
}

/** Value keywords copied as they are. */
const COPIED = new Set([
  'type', 'description', 'default', 'enum', 'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf',
  'minLength', 'maxLength', 'pattern', 'minItems', 'maxItems', 'uniqueItems', 'minProperties', 'maxProperties', 'required', 'nullable',
  'x-kubernetes-int-or-string', 'x-kubernetes-preserve-unknown-fields', 'x-kubernetes-list-type', 'x-kubernetes-list-map-keys', 'x-kubernetes-map-type',
]);
const DROPPED = new Set(['additionalProperties', RULES_KEYWORD, EXPECTED_KEYWORD, '$schema', '$id', 'title', 'examples']);

export function toValidations(rules: readonly CrossFieldRule<unknown>[]): KubernetesValidation[] {
  return rules.map((r) => ({ rule: r.cel, message: r.message, ...(r.path ? { fieldPath: r.path } : {}) }));
}

export function toOpenAPI(schema: unknown): OpenAPISchema {
  const s = schema as Record<string, unknown>;
  const out: OpenAPISchema = {};
  for (const [key, value] of Object.entries(s)) {
    if (COPIED.has(key)) {
      out[key] = structuredClone(value);
    } else if (key === 'format') {
      if (!LOCAL_FORMATS.has(value as string)) out.format = value;
    } else if (key === 'properties') {
      out.properties = Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, toOpenAPI(v)]));
    } else if (key === 'items') {
      out.items = toOpenAPI(value);
    } else if (key === 'patternProperties') {
      out.additionalProperties = toOpenAPI(Object.values(value as Record<string, unknown>)[0]);
    } else if (key === 'anyOf') {
      // Only int-or-string nodes use anyOf, and Kubernetes accepts exactly the bare type branches.
      out.anyOf = (value as Record<string, unknown>[]).map((b) => ({ type: b.type }));
    } else if (!DROPPED.has(key) && !key.startsWith('x-switchboard-')) {
      throw new Error(`schema keyword ${key} has no CRD translation`);
    }
  }
  const rules = s[RULES_KEYWORD] as CrossFieldRule<unknown>[] | undefined;
  if (rules && rules.length > 0) out['x-kubernetes-validations'] = toValidations(rules);
  return out;
}
