/**
 * A strict structural check of rendered Kubernetes objects against the model types of
 * @kubernetes/client-node (generated from the Kubernetes OpenAPI, release-1.36): every field must
 * exist on its type (an unknown or misspelt field fails, which the API server would only warn
 * about or silently drop), scalars must have their type, and fields the model marks required must
 * be present. Kinds client-node does not model (GatewayClass, VerticalPodAutoscaler, ServiceMonitor,
 * PodMonitor) are checked against the small closed shapes in EXTRA_SHAPES below — the fields this
 * chart writes, taken from their CRDs' documentation — since no OpenAPI for them is available offline.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import * as k8s from '@kubernetes/client-node';

interface Attribute { name: string; baseName: string; type: string }
type Model = { getAttributeTypeMap(): Attribute[] };

const MODELS_DIR = join(dirname(createRequire(import.meta.url).resolve('@kubernetes/client-node')), 'gen', 'models');

/** apiVersion + kind → client-node model class name. */
function modelName(apiVersion: string, kind: string): string | undefined {
  const [group, version] = apiVersion.includes('/') ? apiVersion.split('/') : ['', apiVersion];
  const v = version[0].toUpperCase() + version.slice(1);
  // client-node names models by version only (V1Deployment, V2HorizontalPodAutoscaler); the group
  // matters only for kinds this chart does not render.
  void group;
  const name = `${v}${kind}`;
  return name in k8s ? name : undefined;
}

const requiredCache = new Map<string, Set<string>>();
/** The model's required fields: its .d.ts declares them without `?`. */
function requiredFields(model: string): Set<string> {
  let found = requiredCache.get(model);
  if (!found) {
    found = new Set<string>();
    let dts = '';
    try { dts = readFileSync(join(MODELS_DIR, `${model}.d.ts`), 'utf8'); } catch { /* not a generated model */ }
    for (const m of dts.matchAll(/^ {4}'([^']+)': /gm)) found.add(m[1]);
    requiredCache.set(model, found);
  }
  return found;
}

function check(value: unknown, type: string, path: string, errors: string[]): void {
  if (value === null || value === undefined) return;
  const array = /^Array<(.+)>$/.exec(type);
  if (array) {
    if (!Array.isArray(value)) { errors.push(`${path}: expected a list, got ${JSON.stringify(value)}`); return; }
    value.forEach((item, i) => check(item, array[1], `${path}[${i}]`, errors));
    return;
  }
  const map = /^\{ \[key: string\]: (.+); \}$/.exec(type);
  if (map) {
    if (typeof value !== 'object' || Array.isArray(value)) { errors.push(`${path}: expected a map`); return; }
    for (const [k, v] of Object.entries(value)) check(v, map[1], `${path}.${k}`, errors);
    return;
  }
  switch (type) {
    case 'string': if (typeof value !== 'string') errors.push(`${path}: expected a string, got ${JSON.stringify(value)}`); return;
    case 'number': if (typeof value !== 'number') errors.push(`${path}: expected a number, got ${JSON.stringify(value)}`); return;
    case 'boolean': if (typeof value !== 'boolean') errors.push(`${path}: expected a boolean, got ${JSON.stringify(value)}`); return;
    case 'Date': if (typeof value !== 'string') errors.push(`${path}: expected a timestamp`); return;
    case 'IntOrString': if (typeof value !== 'string' && typeof value !== 'number') errors.push(`${path}: expected an int or string`); return;
    case 'any': case 'object': return;
  }
  const model = (k8s as unknown as Record<string, Model | undefined>)[type];
  if (!model || typeof model.getAttributeTypeMap !== 'function') { errors.push(`${path}: no model for type ${type}`); return; }
  if (typeof value !== 'object' || Array.isArray(value)) { errors.push(`${path}: expected an object of ${type}`); return; }
  const attributes = new Map(model.getAttributeTypeMap().map((a) => [a.baseName, a]));
  for (const [k, v] of Object.entries(value)) {
    const a = attributes.get(k);
    if (!a) errors.push(`${path}.${k}: unknown field of ${type}`);
    else check(v, a.type, `${path}.${k}`, errors);
  }
  for (const r of requiredFields(type)) {
    const a = model.getAttributeTypeMap().find((x) => x.name === r);
    if (a && !(a.baseName in value)) errors.push(`${path}: missing required field ${a.baseName} of ${type}`);
  }
}

/** A closed shape: field → nested shape, or a scalar type name, or [shape] for a list. */
type Shape = string | { [field: string]: Shape } | [Shape];
const META: Shape = 'V1ObjectMeta';
const LABEL_SELECTOR: Shape = 'V1LabelSelector';
const EXTRA_SHAPES: Record<string, Shape> = {
  'gateway.networking.k8s.io/v1 GatewayClass': {
    apiVersion: 'string', kind: 'string', metadata: META,
    spec: { controllerName: 'string', description: 'string', parametersRef: { group: 'string', kind: 'string', name: 'string', namespace: 'string' } },
  },
  'autoscaling.k8s.io/v1 VerticalPodAutoscaler': {
    apiVersion: 'string', kind: 'string', metadata: META,
    spec: { targetRef: 'V1CrossVersionObjectReference', updatePolicy: 'any', resourcePolicy: 'any', recommenders: 'any' },
  },
  'monitoring.coreos.com/v1 ServiceMonitor': {
    apiVersion: 'string', kind: 'string', metadata: META,
    spec: { selector: LABEL_SELECTOR, namespaceSelector: 'any', endpoints: [{ port: 'string', path: 'string', interval: 'string' }] },
  },
  'monitoring.coreos.com/v1 PodMonitor': {
    apiVersion: 'string', kind: 'string', metadata: META,
    spec: { selector: LABEL_SELECTOR, namespaceSelector: { any: 'boolean', matchNames: ['string'] }, podMetricsEndpoints: [{ targetPort: 'number', port: 'string', path: 'string', interval: 'string' }] },
  },
};

function checkShape(value: unknown, shape: Shape, path: string, errors: string[]): void {
  if (typeof shape === 'string') { check(value, shape, path, errors); return; }
  if (Array.isArray(shape)) {
    if (!Array.isArray(value)) { errors.push(`${path}: expected a list`); return; }
    value.forEach((item, i) => checkShape(item, shape[0], `${path}[${i}]`, errors));
    return;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) { errors.push(`${path}: expected an object`); return; }
  for (const [k, v] of Object.entries(value)) {
    if (!(k in shape)) errors.push(`${path}.${k}: unknown field`);
    else checkShape(v, shape[k], `${path}.${k}`, errors);
  }
}

/** Problems with one rendered object; [] when it is well formed. */
export function validateObject(object: Record<string, unknown>): string[] {
  const errors: string[] = [];
  const { apiVersion, kind } = object as { apiVersion?: unknown; kind?: unknown };
  if (typeof apiVersion !== 'string' || typeof kind !== 'string') return ['object without apiVersion/kind'];
  const name = `${kind}`;
  const extra = EXTRA_SHAPES[`${apiVersion} ${kind}`];
  if (extra) checkShape(object, extra, name, errors);
  else {
    const model = modelName(apiVersion, kind);
    if (!model) return [`${apiVersion} ${kind}: no schema to validate it against`];
    check(object, model, name, errors);
  }
  const meta = object.metadata as { name?: unknown } | undefined;
  if (typeof meta?.name !== 'string' || !/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(meta.name) || meta.name.length > 253) errors.push(`${name}: metadata.name ${JSON.stringify(meta?.name)} is not a DNS subdomain`);
  return errors;
}
