/**
 * The `a2a` CEL variable of a request to an A2A backend, read from its JSON-RPC body (docs/cel.md,
 * docs/a2a.md): the method (v1.0 `SendMessage`, v0.3 `message/send` … as the client wrote it),
 * the task and context it names, and the skill a client asked for in the message's metadata (A2A
 * has no skill field of its own: the agent picks one). Only A2A backends pay for the parse, once
 * per buffered body (the CEL activation is cached per body).
 */
import type { A2aInput } from '../../cel/index.ts';

type Dict = Record<string, unknown>;

const isDict = (v: unknown): v is Dict => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/** What a JSON-RPC body says of the call; undefined when the body is not one (REST binding, a card fetch, bad JSON). */
export function a2aCelInput(body: Buffer): A2aInput | undefined {
  if (body.length === 0) return undefined;
  let rpc: unknown;
  try {
    rpc = JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
  if (!isDict(rpc) || typeof rpc.method !== 'string') return undefined;
  const params = isDict(rpc.params) ? rpc.params : {};
  const message = isDict(params.message) ? params.message : {};
  const metadata = isDict(message.metadata) ? message.metadata : {};
  const out: A2aInput = { method: rpc.method };
  // GetTask / CancelTask name the task as params.id (v0.3) or params.id / params.name (v1.0: "tasks/{id}").
  const taskId = str(message.taskId) || str(params.id) || str(params.name)?.replace(/^tasks\//, '');
  if (taskId) out.taskId = taskId;
  const contextId = str(message.contextId);
  if (contextId) out.contextId = contextId;
  const skill = str(metadata.skill);
  if (skill !== undefined) out.skill = skill;
  return out;
}
