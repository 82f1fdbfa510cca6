import type { KubeObject, ObjectStatus } from '../../api/gateway/object.ts';
import { isDict } from './read.ts';
import { generationOf } from './snapshot.ts';
import { condition } from './status/conditions.ts';

export interface GatewayClassResult {
  /** Names of the classes this controller owns. */
  readonly ours: ReadonlySet<string>;
  readonly statuses: readonly ObjectStatus[];
}

/** Claim exactly the classes whose controllerName is ours; other classes get no status at all. */
export function translateGatewayClasses(classes: readonly KubeObject[], controllerName: string): GatewayClassResult {
  const ours = new Set<string>();
  const statuses: ObjectStatus[] = [];
  for (const gc of classes) {
    const spec = isDict(gc.spec) ? gc.spec : {};
    if (spec.controllerName !== controllerName) continue;
    ours.add(gc.metadata.name);
    const generation = generationOf(gc);
    statuses.push({
      apiVersion: gc.apiVersion,
      kind: gc.kind,
      metadata: { name: gc.metadata.name },
      status: {
        conditions: [
          condition('Accepted', true, 'Accepted', `GatewayClass is accepted by ${controllerName}`, generation),
          condition('SupportedVersion', true, 'SupportedVersion', 'Gateway API v1 is supported', generation),
        ],
      },
    });
  }
  return { ours, statuses };
}
