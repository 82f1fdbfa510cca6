import type { Bind, Listener, RouteAttachment } from '../../ir/types.ts';
import { hostnameSpecificity } from './hostnames.ts';
import { isProgrammed, type ListenerModel } from './listener.ts';
import type { Attachment } from './route/parents.ts';
import { compareStrings } from './snapshot.ts';

/** Every host: one frozen array for all the binds' route attachments that have no hostnames (10k at 10k routes). */
const EVERY_HOST: readonly string[] = Object.freeze([]);

/**
 * One Bind per port with every programmed listener on it, most specific hostname first. A route
 * attached to a listener through several parentRefs is listed once with the union of its hostnames.
 */
export function buildBinds(listeners: readonly ListenerModel[], attachments: readonly { routeKey: string; attachment: Attachment }[]): Bind[] {
  const routesByListener = new Map<string, Map<string, Set<string> | 'any'>>();
  for (const { routeKey, attachment } of attachments) {
    const routes = routesByListener.get(attachment.listener.key) ?? new Map<string, Set<string> | 'any'>();
    routesByListener.set(attachment.listener.key, routes);
    const known = routes.get(routeKey);
    if (attachment.hostnames.length === 0 || known === 'any') routes.set(routeKey, 'any');
    else routes.set(routeKey, new Set([...(known ?? []), ...attachment.hostnames]));
  }

  const byPort = new Map<number, Listener[]>();
  for (const model of listeners) {
    if (!isProgrammed(model)) continue;
    const routes: RouteAttachment[] = [...(routesByListener.get(model.key) ?? new Map<string, Set<string> | 'any'>())]
      .map(([routeKey, hosts]) => ({ routeKey, hostnames: hosts === 'any' ? EVERY_HOST : [...hosts].sort() }))
      .sort((a, b) => compareStrings(a.routeKey, b.routeKey));
    const listener: Listener = {
      key: model.key,
      gateway: model.gateway,
      sectionName: model.name,
      hostname: model.hostname,
      protocol: model.protocol,
      ...(model.protocol === 'HTTPS' ? { tls: { certificates: model.certificates } } : {}),
      routes,
      ...(model.sessionKey !== undefined ? { sessionKey: model.sessionKey } : {}),
    };
    byPort.set(model.port, [...(byPort.get(model.port) ?? []), listener]);
  }
  return [...byPort]
    .sort(([a], [b]) => a - b)
    .map(([port, list]) => {
      const sorted = list.sort((a, b) => hostnameSpecificity(a.hostname, b.hostname) || compareStrings(a.key, b.key));
      // Conflict detection guarantees one protocol per port.
      return { key: `bind/${port}`, port, protocol: sorted[0].protocol, listeners: sorted };
    });
}
