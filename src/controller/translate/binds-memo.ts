import type { Bind } from '../../ir/types.ts';
import { buildBinds } from './binds.ts';
import type { ListenerModel } from './listener.ts';
import type { Attachment } from './route/parents.ts';

type TaggedAttachment = { readonly routeKey: string; readonly attachment: Attachment };

/**
 * The binds kept between translations of a changing object set (issue 15). buildBinds() reads the
 * listeners (Gateways, ListenerSets, Secrets, Namespaces: the owner calls `clear()` when anything
 * but routes and policies changes) and, per attachment in order, its route key, listener key and
 * hostnames. When those are all equal to last time's, last time's binds are returned: a route
 * edit that does not move the route (a path, a filter, a backend) rebuilds no binds.
 */
export class BindsMemo {
  #kept: { readonly attachments: readonly TaggedAttachment[]; readonly binds: Bind[] } | undefined;

  clear(): void {
    this.#kept = undefined;
  }

  build(listeners: readonly ListenerModel[], attachments: readonly TaggedAttachment[]): Bind[] {
    const kept = this.#kept;
    if (kept !== undefined && sameAttachments(kept.attachments, attachments)) return kept.binds;
    const binds = buildBinds(listeners, attachments);
    this.#kept = { attachments, binds };
    return binds;
  }
}

function sameAttachments(a: readonly TaggedAttachment[], b: readonly TaggedAttachment[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i] as TaggedAttachment;
    const y = b[i] as TaggedAttachment;
    if (x === y) continue;
    if (x.routeKey !== y.routeKey || x.attachment.listener.key !== y.attachment.listener.key) return false;
    const hx = x.attachment.hostnames;
    const hy = y.attachment.hostnames;
    if (hx.length !== hy.length) return false;
    for (let j = 0; j < hx.length; j++) if (hx[j] !== hy[j]) return false;
  }
  return true;
}
