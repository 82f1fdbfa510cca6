import fs from 'node:fs';
import { packageManifestUrl } from '../../common/entry-points.ts';

/** The version from package.json, read at run time so it can never drift from the package. */
export function versionText(): string {
  const manifest = JSON.parse(fs.readFileSync(packageManifestUrl(), 'utf8')) as { version: string };
  return `switchboard ${manifest.version} (node ${process.version})\n`;
}
