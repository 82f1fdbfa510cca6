/** Editing a JSON request body for `policies.ai` without turning a malformed one into the gateway's error. */
import { jsonTooDeep } from '../../../http/json-depth.ts';

/** Applies `edit` to a JSON object body; a body that is not a JSON object is left for the planner to reject. */
export function rewriteJson(bytes: Uint8Array, edit: (body: Record<string, unknown>) => Record<string, unknown>): Uint8Array {
  let parsed: unknown;
  if (jsonTooDeep(bytes)) return bytes;
  try {
    parsed = JSON.parse(Buffer.from(bytes).toString('utf8'));
  } catch {
    return bytes;
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) return bytes;
  return Buffer.from(JSON.stringify(edit(parsed as Record<string, unknown>)));
}
