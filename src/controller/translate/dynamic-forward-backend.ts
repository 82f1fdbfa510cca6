/**
 * ProxyBackend `spec.dynamicForwardProxy` → IR. The backend can reach arbitrary destinations, so
 * SPEC.md asks for access control: it is accepted only with an explicit `accessControl.allowedHosts`
 * list (`*` must be written to allow any name), and refused with a status saying so otherwise.
 * Loopback, link-local, metadata and unspecified addresses stay blocked unless
 * `accessControl.allowAddressClasses` names them (docs/forward-proxy.md).
 */
import type { Condition } from '../../api/gateway/object.ts';
import type { DynamicForwardIR, ForwardAddressClass } from '../../ir/dynamic-forward.ts';
import { isDict, type Dict } from './read.ts';
import { condition } from './status/conditions.ts';

const CLASSES: readonly ForwardAddressClass[] = ['loopback', 'linkLocal', 'metadata', 'unspecified'];
const MAX_HOSTS = 256;
/** `*`, an exact DNS name or IP, or `*.suffix`. */
const HOST_PATTERN = /^(?:\*|(?:\*\.)?[a-z0-9_](?:[a-z0-9_.:-]{0,251}[a-z0-9_])?)$/;

export type DynamicForwardTranslation =
  | { readonly ir: DynamicForwardIR; readonly conditions: readonly Condition[] }
  | { readonly ir?: undefined; readonly problem: string; readonly conditions: readonly Condition[] };

export function translateDynamicForward(spec: Dict, generation: number | undefined): DynamicForwardTranslation {
  const refuse = (problem: string): DynamicForwardTranslation => ({ problem, conditions: [condition('Accepted', false, 'Invalid', problem, generation)] });
  const dfp = spec.dynamicForwardProxy;
  if (!isDict(dfp)) return refuse('spec.dynamicForwardProxy must be an object');
  const access = dfp.accessControl;
  if (!isDict(access) || !Array.isArray(access.allowedHosts) || access.allowedHosts.length === 0) {
    return refuse(
      'spec.dynamicForwardProxy.accessControl.allowedHosts is required: a forward proxy can reach arbitrary destinations, so the ' +
        "destinations it may reach must be listed (write '*' to allow any name on purpose)",
    );
  }
  if (access.allowedHosts.length > MAX_HOSTS) return refuse(`spec.dynamicForwardProxy.accessControl.allowedHosts: at most ${MAX_HOSTS} entries`);
  const allowedHosts: string[] = [];
  for (const [i, host] of access.allowedHosts.entries()) {
    const name = typeof host === 'string' ? host.toLowerCase() : '';
    if (!HOST_PATTERN.test(name)) return refuse(`spec.dynamicForwardProxy.accessControl.allowedHosts[${i}] must be '*', a host name, an IP or '*.suffix'`);
    allowedHosts.push(name);
  }
  const classes = access.allowAddressClasses ?? [];
  if (!Array.isArray(classes)) return refuse('spec.dynamicForwardProxy.accessControl.allowAddressClasses must be a list');
  const allowAddressClasses: ForwardAddressClass[] = [];
  for (const [i, c] of classes.entries()) {
    if (!CLASSES.includes(c as ForwardAddressClass)) return refuse(`spec.dynamicForwardProxy.accessControl.allowAddressClasses[${i}] must be one of ${CLASSES.join(', ')}`);
    allowAddressClasses.push(c as ForwardAddressClass);
  }
  return { ir: { allowedHosts, allowAddressClasses }, conditions: [condition('Accepted', true, 'Accepted', 'Dynamic forward proxy backend is accepted', generation)] };
}
