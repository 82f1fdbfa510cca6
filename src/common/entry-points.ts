/**
 * Where the files a running Switchboard opens by path are, from the TypeScript sources or from the
 * production build (issue 15: time to ready and RSS; scripts/build.ts writes dist/).
 *
 * In the build, `import.meta.url` is the URL of the bundle or chunk a module was bundled into, not
 * of its source file, so a path relative to a source file points nowhere. Every chunk and entry of
 * the build sits in one folder (dist/), which is all this needs: a worker entry is a sibling of the
 * chunk holding this code, and package.json is in the folder above.
 *
 * The build replaces `SWITCHBOARD_BUNDLED` with `true` (esbuild's `define`); from the sources it is
 * an undeclared global, so the sources answer their own .ts files as before.
 */

declare const SWITCHBOARD_BUNDLED: boolean | undefined;

/** True when this code runs from the production build (dist/), false from the TypeScript sources. */
export const RUNNING_BUNDLED: boolean = typeof SWITCHBOARD_BUNDLED === 'boolean' && SWITCHBOARD_BUNDLED;

/**
 * The module a worker (thread or cluster process) runs: `source` itself from the sources, the build's
 * bundle of it (`dist/<name>.mjs`, named after the source file) from the build. `source` is the URL
 * of the .ts worker module, relative to the caller's `import.meta.url`.
 */
export function workerEntry(source: URL): URL {
  if (!RUNNING_BUNDLED) return source;
  const name = source.pathname.slice(source.pathname.lastIndexOf('/') + 1).replace(/\.ts$/, '');
  return new URL(`./${name}.mjs`, import.meta.url);
}

/** The URL of Switchboard's package.json (its version): at the repository root from the sources, beside dist/ from the build. */
export function packageManifestUrl(): URL {
  return RUNNING_BUNDLED ? new URL('../package.json', import.meta.url) : new URL('../../package.json', import.meta.url);
}
