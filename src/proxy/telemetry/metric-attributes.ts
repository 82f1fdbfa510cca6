/**
 * frontend `metrics.attributes` (SPEC.md): CEL labels added to the request metrics of a bind.
 * Compiled once per config; evaluated when a request ends, only on binds that configure them.
 *
 * Label names come from the config (sanitised to Prometheus' alphabet). Values come from requests,
 * so each attribute's values are capped (BoundedLabel: 100 distinct values per attribute name and
 * process, 128 characters; later new values are `other`); a failing expression is `unknown`.
 */
import { compile, createActivation, metricLabel, type Program } from '../../cel/index.ts';
import type { DownstreamRequest } from '../http/downstream.ts';
import { BoundedLabel } from './bounded-label.ts';

export const MAX_ATTRIBUTE_VALUES = 100;
/** Labels the request metrics already carry: an attribute may not replace them. */
export const BUILT_IN_LABELS: ReadonlySet<string> = new Set(['gateway', 'listener', 'route', 'backend', 'status', 'le']);

export interface MetricAttribute {
  readonly label: string;
  readonly program: Program;
}

/** The compiled attributes; invalid expressions and names are reported and left out (metrics stay plain). */
export function compileMetricAttributes(add: readonly { readonly name: string; readonly expression: string }[], report: (message: string) => void): readonly MetricAttribute[] {
  const out: MetricAttribute[] = [];
  for (const { name, expression } of add) {
    const label = labelName(name);
    if (BUILT_IN_LABELS.has(label) || out.some((a) => a.label === label)) {
      report(`attribute "${name}" is the label "${label}", which is already used`);
      continue;
    }
    const compiled = compile(expression);
    if (!compiled.ok) {
      report(`attribute "${name}": invalid CEL expression: ${compiled.error.message}`);
      continue;
    }
    out.push({ label, program: compiled.program });
  }
  return out;
}

/** A Prometheus label name: [a-zA-Z_][a-zA-Z0-9_]*, other characters become `_`; `__` names are reserved. */
export function labelName(name: string): string {
  let label = name.replace(/[^a-zA-Z0-9_]/g, '_');
  if (/^[0-9]/.test(label)) label = `_${label}`;
  if (label.startsWith('__')) label = `attr${label}`;
  return label;
}

const valuesByLabel = new Map<string, BoundedLabel>();

function bounded(label: string): BoundedLabel {
  let values = valuesByLabel.get(label);
  if (values === undefined) {
    values = new BoundedLabel(MAX_ATTRIBUTE_VALUES);
    valuesByLabel.set(label, values);
  }
  return values;
}

export interface EndedRequest {
  readonly req: DownstreamRequest;
  readonly scheme: 'http' | 'https';
  readonly status: number;
  readonly names: { readonly gateway: string; readonly listener: string; readonly route: string; readonly backend: string };
}

/** The attribute labels of one ended request (what an access log line sees: request, source, response, names). */
export function attributeLabels(attributes: readonly MetricAttribute[], ended: EndedRequest): Record<string, string> {
  const { req, scheme, status, names } = ended;
  const host = req.headers[':authority'] ?? req.headers.host;
  const activation = createActivation({
    request: { method: req.method ?? 'GET', url: req.url ?? '/', host: typeof host === 'string' ? host : undefined, scheme, headers: req.headers, version: req.httpVersion === '2.0' ? 'HTTP/2' : `HTTP/${req.httpVersion}` },
    source: { address: req.socket.remoteAddress ?? '', port: req.socket.remotePort ?? 0 },
    response: { code: status },
    route: { name: names.route },
    backend: { name: names.backend },
    gateway: { name: names.gateway, listener: names.listener },
  });
  const out: Record<string, string> = {};
  for (const { label, program } of attributes) out[label] = bounded(label).value(metricLabel(program, activation));
  return out;
}
