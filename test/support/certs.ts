/**
 * Self-signed certificates for TLS tests, made with the `openssl` binary (node:crypto can make keys
 * but not X.509 certificates). EC P-256 keys keep generation fast; results are cached per process
 * by hostname list, so suites that ask twice get the same certificate.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TestCertificate {
  /** The subject CN: the first hostname. */
  readonly commonName: string;
  readonly hostnames: readonly string[];
  readonly certPem: string;
  readonly keyPem: string;
}

const cache = new Map<string, TestCertificate>();

/** A certificate whose CN is `hostnames[0]` and whose SAN lists every hostname (wildcards allowed). */
export function createCertificate(hostnames: readonly string[]): TestCertificate {
  if (hostnames.length === 0) throw new Error('createCertificate needs at least one hostname');
  const key = hostnames.join(',');
  const cached = cache.get(key);
  if (cached) return cached;

  const dir = mkdtempSync(join(tmpdir(), 'switchboard-cert-'));
  try {
    const keyPath = join(dir, 'key.pem');
    const certPath = join(dir, 'cert.pem');
    execFileSync('openssl', [
      'req', '-x509', '-nodes', '-days', '2',
      '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1',
      '-keyout', keyPath, '-out', certPath,
      '-subj', `/CN=${hostnames[0]}`,
      '-addext', `subjectAltName=${hostnames.map((h) => `DNS:${h}`).join(',')}`,
    ], { stdio: ['ignore', 'ignore', 'pipe'] });
    const cert: TestCertificate = {
      commonName: hostnames[0],
      hostnames: [...hostnames],
      certPem: readFileSync(certPath, 'utf8'),
      keyPem: readFileSync(keyPath, 'utf8'),
    };
    cache.set(key, cert);
    return cert;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
