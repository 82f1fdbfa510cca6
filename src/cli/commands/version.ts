import fs from 'node:fs';

/** The version from package.json, read at run time so it can never drift from the package. */
export function versionText(): string {
  const manifest = JSON.parse(fs.readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string };
  return `switchboard ${manifest.version} (node ${process.version})\n`;
}
