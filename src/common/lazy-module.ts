import { createRequire } from 'node:module';

/**
 * A module loaded the first time it is asked for, not when the proxy's modules load (issue 15:
 * memory and time to ready). For the gRPC stack (connect-rpc, protobuf-es and the generated xDS
 * messages: ~30 MiB of RSS and ~0.15 s per process) that only external processing, external
 * authorization, a global rate limit and MCP guardrails use: a gateway whose config names none of
 * them never loads it.
 *
 * The first ask comes from compiling a config that uses the member (never from a request: a
 * request reaches these members only through what that compile built), and loads synchronously
 * (`require` of an ES module): that compile slice takes the load time once per process. The
 * module is the one a static import of it gets (one module cache), so its classes are the same.
 *
 * Only our own modules (a relative specifier): `require` of a package takes its CommonJS build when
 * it has one — a second copy beside the ES one the rest of the proxy imports, with other classes.
 * A package is wrapped in a module of ours that imports it (src/proxy/ext/grpc-transport.ts).
 */
export function lazyModule<T>(base: string, specifier: string): () => T {
  if (!specifier.startsWith('./') && !specifier.startsWith('../')) throw new Error(`lazyModule: ${specifier} is not a module of ours (a package's CommonJS build would load beside its ES build)`);
  let module: T | undefined;
  return () => (module ??= createRequire(base)(specifier) as T);
}
