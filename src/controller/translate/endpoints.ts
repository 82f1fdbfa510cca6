import type { EndpointSliceEndpoint, EndpointSlicePort, ServicePort } from '../../api/gateway/index.ts';
import type { KubeObject } from '../../api/gateway/object.ts';
import type { Endpoint } from '../../ir/types.ts';
import { isDict, isPort, listOf } from './read.ts';
import { compareStrings, namespaceOf, type Snapshot } from './snapshot.ts';

export interface ServiceEndpoints {
  readonly endpoints: readonly Endpoint[];
  readonly appProtocol?: string;
}

/**
 * Ready endpoints of one Service port. An EndpointSlice port belongs to the Service port with
 * the same name (both unnamed counts as the same), or failing that to a numeric targetPort equal
 * to it. Endpoints whose `conditions.ready` is false are left out; an absent condition means ready.
 */
export function serviceEndpoints(service: KubeObject, port: ServicePort, slices: readonly KubeObject[]): ServiceEndpoints {
  const spec = isDict(service.spec) ? service.spec : {};
  if (spec.type === 'ExternalName') {
    const host = typeof spec.externalName === 'string' ? spec.externalName : '';
    return withAppProtocol(host ? [{ host, port: port.port }] : [], port.appProtocol);
  }
  const seen = new Set<string>();
  const endpoints: Endpoint[] = [];
  let appProtocol = port.appProtocol;
  for (const slice of slices) {
    const slicePort = matchingPort(listOf<EndpointSlicePort>(slice.ports), port);
    if (!slicePort || !isPort(slicePort.port)) continue;
    appProtocol ??= slicePort.appProtocol;
    for (const endpoint of listOf<EndpointSliceEndpoint>(slice.endpoints)) {
      if (isDict(endpoint.conditions) && endpoint.conditions.ready === false) continue;
      for (const host of Array.isArray(endpoint.addresses) ? endpoint.addresses : []) {
        const id = `${String(host)}:${slicePort.port}`;
        if (typeof host !== 'string' || seen.has(id)) continue;
        seen.add(id);
        endpoints.push({ host, port: slicePort.port });
      }
    }
  }
  endpoints.sort((a, b) => compareStrings(a.host, b.host) || a.port - b.port);
  return withAppProtocol(endpoints, appProtocol);
}

function matchingPort(ports: readonly EndpointSlicePort[], servicePort: ServicePort): EndpointSlicePort | undefined {
  const byName = ports.find((p) => (p.name ?? '') === (servicePort.name ?? ''));
  if (byName) return byName;
  const target = typeof servicePort.targetPort === 'number' ? servicePort.targetPort : undefined;
  return target === undefined ? undefined : ports.find((p) => p.port === target);
}

function withAppProtocol(endpoints: Endpoint[], appProtocol: string | undefined): ServiceEndpoints {
  return typeof appProtocol === 'string' && appProtocol ? { endpoints, appProtocol } : { endpoints };
}

/**
 * The ready endpoints of a Service port, as route backends resolve them, for a backend the proxy
 * reaches itself (MCP targets, custom LLM providers). An ExternalName Service has no replicas:
 * its DNS name is kept (no endpoints).
 */
export function readyEndpoints(service: KubeObject, port: ServicePort, snapshot: Snapshot): Endpoint[] {
  if (isDict(service.spec) && service.spec.type === 'ExternalName') return [];
  const slices = snapshot.endpointSlices.get(`${namespaceOf(service)}/${service.metadata.name}`) ?? [];
  return [...serviceEndpoints(service, port, slices).endpoints];
}
