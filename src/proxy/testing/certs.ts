/**
 * Test certificates for the proxy's in-process tests: the same helper the e2e suites use
 * (test/support/certs.ts, made in-process with @peculiar/x509), under the name these tests know.
 */
export { createCertificate as selfSignedCertificate, type TestCertificate } from '../../../test/support/certs.ts';
