import type { KubeObject, ObjectStatus } from '../../../api/gateway/object.ts';
import { proxyBackendProblem } from '../backend.ts';
import { generationOf, namespaceOf } from '../snapshot.ts';
import { condition } from './conditions.ts';

/** ProxyBackend `conditions: [Accepted]`, judged on `spec.static`, the only type this translator serves. */
export function proxyBackendStatus(object: KubeObject): ObjectStatus {
  const problem = proxyBackendProblem(object);
  const generation = generationOf(object);
  const accepted = problem === undefined
    ? condition('Accepted', true, 'Accepted', 'Static backend is accepted', generation)
    : condition('Accepted', false, 'Invalid', problem, generation);
  return { apiVersion: object.apiVersion, kind: object.kind, metadata: { name: object.metadata.name, namespace: namespaceOf(object) }, status: { conditions: [accepted] } };
}
