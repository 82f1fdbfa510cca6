/** Path helpers shared by the provider modules. */

/** A model id as one path segment: Bedrock ids carry `:`, and no model name may walk the path. */
export function modelSegment(model: string): string {
  return encodeURIComponent(model);
}

/** `https://x.example.com/` → `x.example.com` (SPEC.md: the scheme is stripped if present). */
export function stripScheme(endpoint: string): string {
  return endpoint.replace(/^[a-z][a-z0-9+.-]*:\/\//i, '').replace(/\/+$/, '');
}

export function joinPath(prefix: string, suffix: string): string {
  return `${prefix.replace(/\/+$/, '')}/${suffix.replace(/^\/+/, '')}`;
}

/** Managed providers speak TLS on 443; a host/port override to another port means plain HTTP (backend TLS policy may still apply). */
export function managedTarget(defaultHost: string, p: { host?: string; port?: number }): { host: string; port: number; tls: boolean } {
  const port = p.port ?? 443;
  return { host: p.host ?? defaultHost, port, tls: port === 443 };
}

export const BEARER = { kind: 'header', name: 'authorization', prefix: 'Bearer ' } as const;

/** Suffixes of the OpenAI-style routes every OpenAI-compatible provider shares. */
export const OPENAI_SUFFIX: Partial<Record<string, { format: 'chat' | 'responses' | 'embeddings' | 'realtime'; suffix: string }>> = {
  Completions: { format: 'chat', suffix: 'chat/completions' },
  Messages: { format: 'chat', suffix: 'chat/completions' },
  Responses: { format: 'responses', suffix: 'responses' },
  Embeddings: { format: 'embeddings', suffix: 'embeddings' },
  Realtime: { format: 'realtime', suffix: 'realtime' },
};
