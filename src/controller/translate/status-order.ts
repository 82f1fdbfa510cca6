import type { ObjectStatus } from '../../api/gateway/object.ts';
import { byObject, statusId } from './object-delta.ts';

/**
 * translate()'s statuses in their written order (byObject: kind, namespace, name, apiVersion;
 * ties in the order given) kept between translations of a changing object set (issue 15). The
 * statuses come in a fixed order of sources (classes, Gateways, routes in age order, policies …);
 * when as many come as last time and each one that is a different object is for the same object
 * (statusId) as the one at its place last time — a route or policy edit — the sorted list is last
 * time's with those statuses put in place: no sort of 11k statuses. Anything else sorts.
 */
export class StatusOrder {
  #kept: { readonly input: readonly ObjectStatus[]; readonly sorted: readonly ObjectStatus[]; readonly at: Int32Array } | undefined;

  sort(input: readonly ObjectStatus[]): ObjectStatus[] {
    const kept = this.#kept;
    if (kept !== undefined && kept.input.length === input.length) {
      let sorted: ObjectStatus[] | undefined;
      let same = true;
      for (let i = 0; i < input.length; i++) {
        const now = input[i] as ObjectStatus;
        const was = kept.input[i] as ObjectStatus;
        if (now === was) continue;
        if (statusId(now) !== statusId(was)) {
          same = false;
          break;
        }
        (sorted ??= kept.sorted.slice())[kept.at[i] as number] = now;
      }
      if (same) {
        const out = sorted ?? kept.sorted.slice();
        this.#kept = { input, sorted: out, at: kept.at };
        // The caller may change its list: the kept one is a copy.
        return out.slice();
      }
    }
    const { sorted, at } = sortWithPlaces(input);
    this.#kept = { input, sorted, at };
    return sorted.slice();
  }
}

/** `input` sorted by byObject (stably, as Array.prototype.sort), and where each input index went. */
function sortWithPlaces(input: readonly ObjectStatus[]): { sorted: ObjectStatus[]; at: Int32Array } {
  const order = Array.from(input.keys()).sort((a, b) => byObject(input[a] as ObjectStatus, input[b] as ObjectStatus) || a - b);
  const at = new Int32Array(input.length);
  const sorted = new Array<ObjectStatus>(input.length);
  for (let k = 0; k < order.length; k++) {
    const i = order[k] as number;
    at[i] = k;
    sorted[k] = input[i] as ObjectStatus;
  }
  return { sorted, at };
}
