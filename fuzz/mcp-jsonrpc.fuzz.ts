/**
 * Fuzz target for the MCP downstream's reading of a client's POST body: the bytes go through
 * parseMessages (src/proxy/mcp/downstream/parse.ts — size, nesting and batch bounds, JSON-RPC
 * shape), then each message through the era classification every POST gets
 * (src/proxy/mcp/modern/envelope.ts), with and without the modern-era headers, and is serialized
 * again as the gateway does when forwarding it. Returns for any input; throws only on a defect:
 * an exception, a refusal other than the documented ones (400/413 with -32700/-32600), or an
 * accepted body that breaks a bound.
 */
import { asMessage, ErrorCode } from '../src/proxy/mcp/jsonrpc.ts';
import { jsonTooDeep } from '../src/proxy/http/json-depth.ts';
import { MAX_BATCH_LENGTH, MAX_JSON_DEPTH, parseMessages } from '../src/proxy/mcp/downstream/parse.ts';
import { classify } from '../src/proxy/mcp/modern/envelope.ts';

const REFUSALS = new Set([`400:${ErrorCode.ParseError}`, `400:${ErrorCode.InvalidRequest}`, `413:${ErrorCode.InvalidRequest}`]);
const HEADERS = [
  {},
  { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'x' },
  { 'mcp-protocol-version': '2025-06-18' },
];

export function fuzz(data: Buffer): void {
  const parsed = parseMessages(data);
  if (!parsed.ok) {
    if (!REFUSALS.has(`${parsed.status}:${parsed.code}`)) throw new Error(`undocumented refusal ${parsed.status} ${parsed.code}: ${parsed.message}`);
    return;
  }
  if (parsed.messages.length === 0 || parsed.messages.length > MAX_BATCH_LENGTH) throw new Error(`accepted a batch of ${parsed.messages.length}`);
  if (!parsed.batch && parsed.messages.length !== 1) throw new Error('a single message parsed as several');
  for (const message of parsed.messages) {
    if (asMessage(message) !== message) throw new Error('accepted something that is not a JSON-RPC message');
    const text = JSON.stringify(message);
    if (jsonTooDeep(Buffer.from(text), MAX_JSON_DEPTH)) throw new Error(`accepted a message nested deeper than ${MAX_JSON_DEPTH}`);
    for (const headers of HEADERS) {
      const era = classify(message, headers);
      if (era.era === 'rejected' && (era.status !== 400 || typeof era.code !== 'number')) throw new Error(`odd rejection ${JSON.stringify(era)}`);
    }
  }
}
