import type { ListenerModel } from './listener.ts';
import type { Problem } from './status/conditions.ts';

/**
 * Mark conflicting listeners. `groups` come in precedence order (oldest Gateway first, each
 * Gateway's own listeners before its ListenerSets'): within one group every listener of a
 * conflicting pair is conflicted, as the Gateway API asks for a Gateway's own listeners; across
 * groups the earlier listener keeps the port and the later one is conflicted. Gateways in one
 * process share ports, so conflicts are found across Gateways too.
 */
export function markConflicts(groups: readonly (readonly ListenerModel[])[]): void {
  const servedByPort = new Map<number, ListenerModel[]>();
  for (const group of groups) {
    const candidates = group.filter((l) => l.accepted.length === 0);
    for (const listener of candidates) {
      const rivals = [...candidates.filter((other) => other !== listener), ...(servedByPort.get(listener.port) ?? [])];
      const conflict = firstConflict(listener, rivals);
      if (conflict) listener.conflict = conflict;
    }
    for (const listener of candidates) {
      if (listener.conflict) continue;
      const served = servedByPort.get(listener.port) ?? [];
      served.push(listener);
      servedByPort.set(listener.port, served);
    }
  }
}

function firstConflict(listener: ListenerModel, rivals: readonly ListenerModel[]): Problem | undefined {
  const samePort = rivals.filter((r) => r.port === listener.port);
  const protocol = samePort.find((r) => r.protocol !== listener.protocol);
  if (protocol) {
    return { reason: 'ProtocolConflict', message: `port ${listener.port} is also used with protocol ${protocol.protocol} by listener ${protocol.key}` };
  }
  const hostname = samePort.find((r) => r.hostname === listener.hostname);
  if (hostname) {
    const name = listener.hostname === null ? 'no hostname' : `hostname ${listener.hostname}`;
    return { reason: 'HostnameConflict', message: `port ${listener.port} with ${name} is also used by listener ${hostname.key}` };
  }
  return undefined;
}
