/**
 * The ListenerSets (ListenerSet, and the experimental XListenerSet) whose listeners a Gateway
 * serves, so its Service and pods expose their ports too. The same rule as the translator
 * (translate/listenerset.ts): the ListenerSet's parentRef names the Gateway and the Gateway's
 * `spec.allowedListeners.namespaces` (`None` by default, `Same`, `All`, `Selector`) admits its
 * namespace.
 */
import type { AllowedListeners } from '../../../api/gateway/index.ts';
import type { KubeObject } from '../../../api/gateway/object.ts';
import { listenerSetParent } from '../../translate/listenerset.ts';
import { selectorMatches } from '../../translate/selector.ts';
import { isMap } from './strategic-merge.ts';

const LISTENER_SET_API_VERSIONS: Readonly<Record<string, string>> = {
  ListenerSet: 'gateway.networking.k8s.io/v1',
  XListenerSet: 'gateway.networking.x-k8s.io/v1alpha1',
};

export function attachedListenerSets(gateway: KubeObject, objects: readonly KubeObject[]): KubeObject[] {
  const gatewayNamespace = gateway.metadata.namespace ?? 'default';
  const spec = isMap(gateway.spec) ? gateway.spec : {};
  const allowed = (isMap(spec.allowedListeners) ? spec.allowedListeners : {}) as AllowedListeners;
  const from = allowed.namespaces?.from ?? 'None';
  if (from === 'None') return [];
  // As the API server labels every namespace with its name (the translator does the same).
  const labels = (namespace: string): Record<string, string> =>
    ({ ...(objects.find((o) => o.kind === 'Namespace' && o.metadata.name === namespace)?.metadata.labels ?? {}), 'kubernetes.io/metadata.name': namespace }) as Record<string, string>;
  return objects.filter((ls) => {
    if (LISTENER_SET_API_VERSIONS[ls.kind] !== ls.apiVersion || listenerSetParent(ls) !== `${gatewayNamespace}/${gateway.metadata.name}`) return false;
    const namespace = ls.metadata.namespace ?? 'default';
    return from === 'All' || (from === 'Same' && namespace === gatewayNamespace) || (from === 'Selector' && isMap(allowed.namespaces?.selector) && selectorMatches(allowed.namespaces.selector, labels(namespace)));
  });
}
