import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { packageManifestUrl, RUNNING_BUNDLED, workerEntry } from './entry-points.ts';

// The build's answers (dist/<worker>.mjs, ../package.json) are checked by running it: test/e2e/dist.test.ts.
describe('entry points from the sources', () => {
  it('are not the build', () => assert.equal(RUNNING_BUNDLED, false));

  it('a worker is its own .ts source', () => {
    const source = new URL('../embedded/config-thread-worker.ts', import.meta.url);
    assert.equal(workerEntry(source), source);
  });

  it("package.json is the repository's", () => {
    const manifest = JSON.parse(readFileSync(packageManifestUrl(), 'utf8')) as { name: string };
    assert.equal(manifest.name, 'switchboard');
  });
});
