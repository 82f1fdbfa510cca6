import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TestCertificate {
  readonly certPem: string;
  readonly keyPem: string;
}

/** A self-signed P-256 certificate for `names` (the first is the CN), made with the machine's openssl. */
export function selfSignedCertificate(names: readonly string[]): TestCertificate {
  const dir = mkdtempSync(join(tmpdir(), 'switchboard-cert-'));
  try {
    const keyFile = join(dir, 'key.pem');
    const certFile = join(dir, 'cert.pem');
    execFileSync('openssl', [
      'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes',
      '-keyout', keyFile, '-out', certFile, '-days', '1', '-subj', `/CN=${names[0]}`,
      '-addext', `subjectAltName=${names.map((n) => `DNS:${n}`).join(',')}`,
    ], { stdio: 'ignore' });
    return { certPem: readFileSync(certFile, 'utf8'), keyPem: readFileSync(keyFile, 'utf8') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
