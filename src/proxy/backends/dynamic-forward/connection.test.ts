import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { BackendPolicy } from '../../../ir/policy.ts';
import { connectionSettings } from '../../policies/backend/connection.ts';
import { FORWARD_CONNECT_TIMEOUT_MS, forwardConnection, rawConnection, tunnelUnapplicable } from './connection.ts';

const policy = (p: Omit<BackendPolicy, 'sources'>): BackendPolicy => ({ sources: {}, ...p });

describe('tunnelUnapplicable: what a CONNECT tunnel refuses', () => {
  const rows: { name: string; policy: BackendPolicy | undefined; want: string[] }[] = [
    { name: 'no policy', policy: undefined, want: [] },
    { name: 'tcp and tunnel shape the connection', policy: policy({ tcp: { connectTimeoutMs: 1000 }, tunnel: { url: 'http://p:3128' } }), want: [] },
    { name: 'health is not applied on this kind, never refused', policy: policy({ health: {} }), want: [] },
    { name: 'members that act on HTTP or TLS', policy: policy({ tls: {}, http: { requestTimeoutMs: 5 }, auth: { key: 'k' } }), want: ['tls', 'http', 'auth'] },
  ];
  for (const row of rows) it(row.name, () => assert.deepEqual(tunnelUnapplicable(row.policy), row.want));
});

describe('forwardConnection: one request\'s settings', () => {
  it('no policy, plain: no TLS, the default connect deadline, HTTP/1.1', () => {
    const s = forwardConnection(undefined, false);
    assert.deepEqual([s.tls, s.connectTimeoutMs, s.version, s.tunnel], [undefined, FORWARD_CONNECT_TIMEOUT_MS, 'http1', undefined]);
  });
  it('no policy, the client asked for TLS: system CAs, the name verified', () => {
    const tls = forwardConnection(undefined, true).tls;
    assert.ok(tls);
    assert.equal(tls.verifyHostname, true);
    assert.equal(tls.options.rejectUnauthorized, true);
  });
  it('the policy\'s tls and tcp win; a raw tunnel keeps tcp but never TLS', () => {
    const settings = connectionSettings(policy({ tls: { sni: 'partner.example' }, tcp: { connectTimeoutMs: 250 } }));
    const s = forwardConnection(settings, false);
    assert.deepEqual([s.tls?.sni, s.connectTimeoutMs], ['partner.example', 250]);
    const raw = rawConnection(settings);
    assert.deepEqual([raw.tls, raw.connectTimeoutMs, raw.version], [undefined, 250, undefined]);
  });
});
