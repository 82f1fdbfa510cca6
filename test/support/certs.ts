/**
 * Self-signed certificates for TLS tests, made in-process with @peculiar/x509 on node's WebCrypto,
 * so `npm test` needs no `openssl` binary (node:crypto makes keys but not X.509 certificates).
 *
 * Each certificate carries what `openssl req -x509` gave the tests before: an EC P-256 key (fast to
 * make) as a PKCS#8 PEM, CN = the first hostname, a SAN with every hostname (wildcards allowed),
 * subject and authority key identifiers, and `basicConstraints: critical, CA:TRUE`, so the same
 * certificate serves as a server certificate, an mTLS client certificate and its own trust anchor
 * (`ca:` on a server, `caCertificatePem` on a backend).
 *
 * WebCrypto signs asynchronously, so `createCertificate` returns a promise; results are cached per
 * process by hostname list, so suites that ask twice get the same certificate.
 */
import { webcrypto } from 'node:crypto';
// Before @peculiar/x509: its tsyringe dependency needs the Reflect metadata API when it loads.
import 'reflect-metadata';
import {
  AuthorityKeyIdentifierExtension,
  BasicConstraintsExtension,
  PemConverter,
  SubjectAlternativeNameExtension,
  SubjectKeyIdentifierExtension,
  X509CertificateGenerator,
} from '@peculiar/x509';

export interface TestCertificate {
  /** The subject CN: the first hostname. */
  readonly commonName: string;
  readonly hostnames: readonly string[];
  readonly certPem: string;
  readonly keyPem: string;
}

const EC_P256 = { name: 'ECDSA', namedCurve: 'P-256' } as const;
const ECDSA_SHA256 = { name: 'ECDSA', hash: 'SHA-256' } as const;
/** Long enough for any test run, short enough that a leaked certificate is useless (as before: 2 days). */
const VALIDITY_MS = 2 * 24 * 60 * 60 * 1000;
/** Backdated a little so a peer whose clock is slightly behind does not see "not yet valid". */
const BACKDATE_MS = 60 * 1000;

const cache = new Map<string, Promise<TestCertificate>>();

/** A certificate whose CN is `hostnames[0]` and whose SAN lists every hostname (wildcards allowed). */
export function createCertificate(hostnames: readonly string[]): Promise<TestCertificate> {
  if (hostnames.length === 0) return Promise.reject(new Error('createCertificate needs at least one hostname'));
  const key = hostnames.join(',');
  let cert = cache.get(key);
  if (!cert) {
    cert = generate([...hostnames]);
    cache.set(key, cert);
    // A failed generation is not cached: the next caller tries again and sees its own error.
    cert.catch(() => cache.delete(key));
  }
  return cert;
}

async function generate(hostnames: readonly string[]): Promise<TestCertificate> {
  const crypto = webcrypto;
  const keys = await crypto.subtle.generateKey(EC_P256, true, ['sign', 'verify']);
  const now = Date.now();
  const certificate = await X509CertificateGenerator.createSelfSigned({
    name: [{ CN: [hostnames[0]] }],
    keys,
    signingAlgorithm: ECDSA_SHA256,
    notBefore: new Date(now - BACKDATE_MS),
    notAfter: new Date(now + VALIDITY_MS),
    extensions: [
      await SubjectKeyIdentifierExtension.create(keys.publicKey, false, crypto),
      await AuthorityKeyIdentifierExtension.create(keys.publicKey, false, crypto),
      new BasicConstraintsExtension(true, undefined, true),
      new SubjectAlternativeNameExtension(hostnames.map((value) => ({ type: 'dns' as const, value }))),
    ],
  }, crypto);
  const pkcs8 = await crypto.subtle.exportKey('pkcs8', keys.privateKey);
  return {
    commonName: hostnames[0],
    hostnames,
    certPem: `${certificate.toString('pem')}\n`,
    keyPem: `${PemConverter.encode(pkcs8, 'PRIVATE KEY')}\n`,
  };
}
