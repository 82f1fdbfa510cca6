import type { KubeObject, ObjectStatus } from '../../../api/gateway/object.ts';
import { translateProxyBackend } from '../proxy-backend.ts';
import { namespaceOf, type Snapshot } from '../snapshot.ts';
import { withBackendFindings } from './unapplied-objects.ts';

/** ProxyBackend `conditions: [Accepted]`, as its type's translator judged it, with the fields the data plane ignores (not-applied.ts). */
export function proxyBackendStatus(object: KubeObject, snapshot: Snapshot): ObjectStatus {
  const { conditions } = translateProxyBackend(object, snapshot);
  return { apiVersion: object.apiVersion, kind: object.kind, metadata: { name: object.metadata.name, namespace: namespaceOf(object) }, status: { conditions: withBackendFindings(object, conditions) } };
}
