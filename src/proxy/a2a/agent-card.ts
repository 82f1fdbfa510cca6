/**
 * The A2A agent card, rewritten so every interface URL in it names the gateway: a client that
 * reads the card through the gateway then sends its messages through the gateway too, never to
 * the agent's own address (which it usually cannot reach, and which would skip every policy).
 *
 * Both card shapes are covered:
 *   v0.3   `url` (the preferred transport's endpoint) and `additionalInterfaces[].url`
 *   v1.0   `supportedInterfaces[].url` (the v0.3 fields too, when an agent sends both)
 * The origin (scheme, host, port) is replaced. The path is the agent's, unless the route rewrote
 * a prefix on the way to the card (client `/agents/echo/.well-known/…` → agent `/.well-known/…`):
 * then paths under the agent's prefix get the client's prefix back, so the interface is reached
 * through the same route. Other URLs (provider.url, documentationUrl, iconUrl) are web pages, not
 * endpoints, and stay as the agent wrote them.
 *
 * Signed cards (A2A §8.4): a signature covers the whole card but its `signatures` (JCS, RFC 8785),
 * so a card whose URLs the gateway changed no longer verifies, and the gateway cannot sign for the
 * agent's key. Such a card leaves without `signatures`: a client that requires one reads it as
 * unsigned (what it now is) instead of as tampered with. A card whose URLs already named the
 * gateway is unchanged and keeps them (docs/a2a.md "Signed agent cards").
 */
import { readBodyBounded, BodyTooLargeError } from '../http/body.ts';
import type { HeaderMap } from '../http/headers.ts';

/** The upstream answer as the filter reads it (policies/context.ts `FilteredResponse`, which this folder sits below). */
export interface CardResponse {
  readonly status: number;
  readonly headers: HeaderMap;
}

/** A response filter (policies/context.ts `ResponseFilter`) that rewrites the body only. */
export interface CardFilter {
  body(body: AsyncIterable<Uint8Array>, response: CardResponse): AsyncIterable<Uint8Array>;
}

/** A card larger than this is not a card: 502 rather than buffering without bound (docs/security.md). */
export const MAX_CARD_BYTES = 256 * 1024;

/** The card's interface lists whose entries carry a `url`. */
const INTERFACE_LISTS = ['additionalInterfaces', 'supportedInterfaces'] as const;

/** A URLRewrite prefix to undo: agent paths under `upstream` are client paths under `client`. */
export interface PrefixMap {
  readonly upstream: string;
  readonly client: string;
}

/**
 * The prefix a route's rewrite replaced, from the card request's client and upstream paths (their
 * common tail is the part the rewrite kept); undefined when the paths are the same.
 */
export function rewrittenPrefix(clientPath: string, upstreamPath: string): PrefixMap | undefined {
  if (clientPath === upstreamPath) return undefined;
  let i = 0;
  while (i < clientPath.length && i < upstreamPath.length && clientPath[clientPath.length - 1 - i] === upstreamPath[upstreamPath.length - 1 - i]) i++;
  // The kept tail starts at a segment: `/ab/x` → `/b/x` replaced `/ab` with `/b`, not `/a` with ``.
  while (i > 0 && upstreamPath[upstreamPath.length - i] !== '/') i--;
  const client = clientPath.slice(0, clientPath.length - i).replace(/\/$/, '');
  const upstream = upstreamPath.slice(0, upstreamPath.length - i).replace(/\/$/, '');
  return client === upstream ? undefined : { upstream, client };
}

/** `url` with its origin replaced by `origin` (`https://gw.example.com`), and a rewritten prefix given back; unparsable URLs are left alone. */
export function toGatewayUrl(url: string, origin: string, prefix?: PrefixMap): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return url;
  }
  // Only web URLs name an endpoint the gateway can stand in for (gRPC cards may carry host:port forms).
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return url;
  let path = parsed.pathname;
  if (prefix && (path === prefix.upstream || path.startsWith(`${prefix.upstream}/`))) path = prefix.client + path.slice(prefix.upstream.length) || '/';
  return origin + path + parsed.search + parsed.hash;
}

/**
 * The card with every interface URL pointing at `origin`; anything that is not a JSON object is
 * returned as is. When a URL changed, the agent's `signatures` (which no longer verify) are dropped.
 */
export function rewriteAgentCard(card: unknown, origin: string, prefix?: PrefixMap): unknown {
  if (typeof card !== 'object' || card === null || Array.isArray(card)) return card;
  const out: Record<string, unknown> = { ...(card as Record<string, unknown>) };
  let changed = false;
  const rewrite = (url: string): string => {
    const next = toGatewayUrl(url, origin, prefix);
    if (next !== url) changed = true;
    return next;
  };
  if (typeof out.url === 'string') out.url = rewrite(out.url);
  for (const list of INTERFACE_LISTS) {
    const entries = out[list];
    if (!Array.isArray(entries)) continue;
    out[list] = entries.map((entry: unknown) => {
      if (typeof entry !== 'object' || entry === null || typeof (entry as { url?: unknown }).url !== 'string') return entry;
      return { ...(entry as Record<string, unknown>), url: rewrite((entry as { url: string }).url) };
    });
  }
  if (changed && 'signatures' in out) delete out.signatures;
  return out;
}

/** An error the response writer sends as its `response` (filtered-response.ts StatusError): a 502 in the gateway's JSON. */
class CardError extends Error {
  readonly response: { readonly status: number; readonly headers: readonly (readonly [string, string])[]; readonly body: Uint8Array };
  constructor(message: string) {
    super(message);
    const body = Buffer.from(JSON.stringify({ error: { code: 'invalid_agent_card', message } }));
    this.response = { status: 502, headers: [['content-type', 'application/json']], body };
  }
}

/**
 * The response filter that rewrites a card answer. Non-2xx and non-JSON answers pass unchanged
 * (an agent's 404 is the client's to read); a 2xx JSON body that does not parse is a 502, since a
 * card with the agent's own URLs would send the client around the gateway.
 */
export function agentCardFilter(origin: string, prefix?: PrefixMap): CardFilter {
  return {
    async *body(body: AsyncIterable<Uint8Array>, response: CardResponse) {
      const type = response.headers['content-type'];
      const json = typeof type === 'string' && /\bjson\b/i.test(type);
      if (response.status < 200 || response.status > 299 || !json) {
        yield* body;
        return;
      }
      let bytes: Buffer;
      try {
        bytes = await readBodyBounded(body, MAX_CARD_BYTES, { what: 'agent card' });
      } catch (err) {
        if (err instanceof BodyTooLargeError) throw new CardError(`agent card over ${MAX_CARD_BYTES} bytes`);
        throw err;
      }
      let card: unknown;
      try {
        card = JSON.parse(bytes.toString('utf8'));
      } catch {
        throw new CardError('agent card is not valid JSON');
      }
      yield Buffer.from(JSON.stringify(rewriteAgentCard(card, origin, prefix)));
    },
  };
}
