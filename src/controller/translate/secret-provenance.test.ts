/**
 * Every field of the API that reads a Secret, end to end through the real translator: the value
 * (and every form derived from it) reaches the IR, and /config_dump (redactedJson with the
 * translator's secretPaths) and the statuses never show it.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { parseAllDocuments } from 'yaml';
import type { KubeObject } from '../../api/gateway/object.ts';
import { redactedJson } from '../../embedded/admin-server.ts';
import { createCertificate } from '../../../test/support/certs.ts';
import { translate } from './index.ts';

const BASE = `
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: { name: switchboard }
spec: { controllerName: switchboard.dev/gateway-controller }
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: { name: gw }
spec:
  gatewayClassName: switchboard
  listeners: [{ name: http, port: 80, protocol: HTTP }]
---
apiVersion: v1
kind: Service
metadata: { name: api }
spec: { ports: [{ port: 8000 }] }
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: r }
spec:
  parentRefs: [{ name: gw }]
  rules:
    - backendRefs: [{ name: api, port: 8000 }]
`;

const marker = (row: string): string => `mk-${row}-Zq8xW3vR7pLk2Nf0`;
const FAKE_PEM = (row: string): string => `-----BEGIN PRIVATE KEY-----\nMIIEv${marker(row)}QIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----\n`;

function secret(name: string, entries: Record<string, string>, how: 'stringData' | 'data' = 'stringData', type?: string): string {
  const body = how === 'data' ? Object.fromEntries(Object.entries(entries).map(([k, v]) => [k, Buffer.from(v).toString('base64')])) : entries;
  return `---\n${JSON.stringify({ apiVersion: 'v1', kind: 'Secret', metadata: { name }, ...(type ? { type } : {}), [how]: body })}\n`;
}

function backendAuthPolicy(auth: unknown): string {
  return `---\n${JSON.stringify({ apiVersion: 'switchboard.dev/v1alpha1', kind: 'ProxyPolicy', metadata: { name: 'p' }, spec: { targetRefs: [{ group: '', kind: 'Service', name: 'api' }], backend: { auth } } })}\n`;
}

function trafficPolicy(traffic: unknown): string {
  return `---\n${JSON.stringify({ apiVersion: 'switchboard.dev/v1alpha1', kind: 'ProxyPolicy', metadata: { name: 't' }, spec: { targetRefs: [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', name: 'r' }], traffic } })}\n`;
}

interface Row {
  readonly name: string;
  /** Manifests added to BASE. */
  readonly yaml: string;
  /** The values written into Secrets: none of their forms may show. */
  readonly secrets: readonly string[];
  /** A form the translator derives that must reach the IR (proves the row exercises the field). */
  readonly inIr: string;
  /** Extra derived forms that must not show (hashes …). */
  readonly derived?: readonly string[];
  /** Public parts that must stay visible. */
  readonly visible?: readonly string[];
}

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');
const cert = await createCertificate(['secret-provenance.test']);
const SA_JSON = JSON.stringify({ type: 'service_account', project_id: 'p', private_key: FAKE_PEM('cloudC'), client_email: 'sa@p.iam.example.com' });

const ROWS: readonly Row[] = [
  {
    name: 'backend auth secretRef, default key, "Bearer sk-…" in stringData (the key is stored without the prefix)',
    yaml: secret('k', { Authorization: `Bearer sk-${marker('bearer')}` }) + backendAuthPolicy({ secretRef: { name: 'k' } }),
    secrets: [`Bearer sk-${marker('bearer')}`], inIr: `sk-${marker('bearer')}`,
  },
  {
    name: 'backend auth secretRef, default key, "Bearer sk-…" in data (base64)',
    yaml: secret('k', { Authorization: `Bearer sk-${marker('bearer-data')}` }, 'data') + backendAuthPolicy({ secretRef: { name: 'k' } }),
    secrets: [`Bearer sk-${marker('bearer-data')}`], inIr: `sk-${marker('bearer-data')}`,
  },
  {
    name: 'backend auth secretRef with a custom key (kept as written)',
    yaml: secret('k', { token: `  tok-${marker('custom')}\n` }) + backendAuthPolicy({ secretRef: { name: 'k', key: 'token' } }),
    secrets: [`  tok-${marker('custom')}\n`], inIr: `tok-${marker('custom')}`,
  },
  {
    name: 'backend auth credentials[] secretRef',
    yaml: secret('k', { Authorization: 'Bearer primary-aaaaaaaaaaaa', extra: `x-${marker('cred')}` }) + backendAuthPolicy({
      secretRef: { name: 'k' }, credentials: [{ location: { header: { name: 'x-extra' } }, secretRef: { name: 'k', key: 'extra' } }],
    }),
    secrets: [`x-${marker('cred')}`, 'Bearer primary-aaaaaaaaaaaa'], inIr: `x-${marker('cred')}`,
  },
  {
    name: 'apiKeyAuthentication secretRef: plain key and JSON entry with metadata (hashes and metadata are Secret data too)',
    yaml: secret('keys', { alice: `ak-${marker('apikey')}`, bob: JSON.stringify({ key: `bk-${marker('apikey')}`, metadata: { team: `team-${marker('apikey')}`, tier: 7 } }) })
      + trafficPolicy({ apiKeyAuthentication: { secretRef: { name: 'keys' } } }),
    secrets: [`ak-${marker('apikey')}`, `bk-${marker('apikey')}`, `team-${marker('apikey')}`],
    inIr: sha256(`ak-${marker('apikey')}`),
    derived: [sha256(`ak-${marker('apikey')}`), sha256(`bk-${marker('apikey')}`)],
  },
  {
    name: 'apiKeyAuthentication secretSelector',
    yaml: `---\n${JSON.stringify({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'sel', labels: { keys: 'yes' } }, data: { carol: Buffer.from(`ck-${marker('selector')}`).toString('base64') } })}\n`
      + trafficPolicy({ apiKeyAuthentication: { secretSelector: { matchLabels: { keys: 'yes' } } } }),
    secrets: [`ck-${marker('selector')}`], inIr: sha256(`ck-${marker('selector')}`), derived: [sha256(`ck-${marker('selector')}`)],
  },
  {
    name: 'basicAuthentication secretRef (a whole password file; each line lands in the IR)',
    yaml: secret('ht', { '.htaccess': `# users\nzed-${marker('htpasswd')}:{SHA}qUqP5cyxm6YcTAhz05Hph5gvu9M=\n` }) + trafficPolicy({ basicAuthentication: { secretRef: { name: 'ht' } } }),
    secrets: [`zed-${marker('htpasswd')}:{SHA}qUqP5cyxm6YcTAhz05Hph5gvu9M=`], inIr: `zed-${marker('htpasswd')}`,
  },
  {
    name: 'backend tls mtlsCertificateRef (the key; the certificate stays visible)',
    yaml: secret('client', { 'tls.crt': cert.certPem, 'tls.key': FAKE_PEM('mtls') }) + `---\n${JSON.stringify({
      apiVersion: 'switchboard.dev/v1alpha1', kind: 'ProxyPolicy', metadata: { name: 'tls' },
      spec: { targetRefs: [{ group: '', kind: 'Service', name: 'api' }], backend: { tls: { mtlsCertificateRef: [{ name: 'client' }] } } },
    })}\n`,
    secrets: [FAKE_PEM('mtls')], inIr: marker('mtls'), visible: [JSON.stringify(cert.certPem)],
  },
  {
    name: 'HTTPS listener certificateRefs (the key; the certificate stays visible)',
    yaml: secret('server', { 'tls.crt': cert.certPem, 'tls.key': cert.keyPem }, 'data', 'kubernetes.io/tls') + `---\n${JSON.stringify({
      apiVersion: 'gateway.networking.k8s.io/v1', kind: 'Gateway', metadata: { name: 'tls-gw' },
      spec: { gatewayClassName: 'switchboard', listeners: [{ name: 'https', port: 443, protocol: 'HTTPS', tls: { mode: 'Terminate', certificateRefs: [{ kind: 'Secret', name: 'server' }] } }] },
    })}\n`,
    secrets: [cert.keyPem], inIr: pemBody(cert.keyPem), visible: [JSON.stringify(cert.certPem)],
  },
  {
    name: 'cloudA secretRef (accessKey, secretKey, sessionToken)',
    yaml: secret('aws', { accessKey: `AKIA${marker('cloudA')}`, secretKey: `sec/${marker('cloudA')}+x`, sessionToken: `tok${marker('cloudA')}==` }) + backendAuthPolicy({ cloudA: { secretRef: { name: 'aws' }, region: 'eu-west-1' } }),
    secrets: [`AKIA${marker('cloudA')}`, `sec/${marker('cloudA')}+x`, `tok${marker('cloudA')}==`], inIr: `sec/${marker('cloudA')}+x`,
  },
  {
    name: 'cloudB secretRef (clientID, tenantID, clientSecret)',
    yaml: secret('azure', { clientID: 'client-id-0000', tenantID: 'tenant-id-0000', clientSecret: `cs~${marker('cloudB')}` }, 'data') + backendAuthPolicy({ cloudB: { secretRef: { name: 'azure' } } }),
    secrets: [`cs~${marker('cloudB')}`, 'client-id-0000', 'tenant-id-0000'], inIr: `cs~${marker('cloudB')}`,
  },
  {
    name: 'cloudC secretRef (a service-account JSON key: the JSON and its private_key)',
    yaml: secret('gcp', { 'credentials.json': SA_JSON }) + backendAuthPolicy({ cloudC: { secretRef: { name: 'gcp' } } }),
    secrets: [SA_JSON, FAKE_PEM('cloudC')], inIr: marker('cloudC'),
  },
  {
    name: 'oauthTokenExchange clientAuth secretRef',
    yaml: secret('idp', { clientSecret: `oc-${marker('oauth')}` }) + backendAuthPolicy({ oauthTokenExchange: { url: 'https://idp.example.com/token', clientAuth: { clientId: 'gw', secretRef: { name: 'idp' } } } }),
    secrets: [`oc-${marker('oauth')}`], inIr: `oc-${marker('oauth')}`,
  },
  {
    name: 'crossAppAccess clientAuth secretRef and privateKeyJwt signingKeyRef',
    yaml: secret('xaa', { clientSecret: `xs-${marker('xaa')}`, signingKey: FAKE_PEM('xaa') }) + backendAuthPolicy({
      crossAppAccess: {
        identityProvider: { url: 'https://idp.example.com/token', clientAuth: { clientId: 'gw', secretRef: { name: 'xaa' } } },
        resourceAuthorizationServer: { url: 'https://as.example.com/token', clientAuth: { clientId: 'gw', method: 'PrivateKeyJwt', privateKeyJwt: { signingKeyRef: { name: 'xaa' }, assertionAudience: 'https://as.example.com' } } },
        audience: 'https://as.example.com',
      },
    }),
    secrets: [`xs-${marker('xaa')}`, FAKE_PEM('xaa')], inIr: `xs-${marker('xaa')}`,
  },
  {
    name: 'jwtSign signingKeyRef',
    yaml: secret('signer', { signingKey: FAKE_PEM('jwtsign') }, 'data') + backendAuthPolicy({ jwtSign: { signingKeyRef: { name: 'signer' } } }),
    secrets: [FAKE_PEM('jwtsign')], inIr: marker('jwtsign'),
  },
  {
    name: 'jwtAuthentication.mcp.clientSecretRef',
    yaml: secret('mcp-client', { clientSecret: `mc-${marker('mcpclient')}` }) + trafficPolicy({
      jwtAuthentication: { providers: [{ issuer: 'https://idp.example.com', jwks: { inline: '{"keys":[]}' } }], mcp: { clientId: 'c', clientSecretRef: { name: 'mcp-client' } } },
    }),
    secrets: [`mc-${marker('mcpclient')}`], inIr: `mc-${marker('mcpclient')}`,
  },
  {
    name: 'AI ProxyBackend inline policies.auth ("Bearer sk-…", the documented provider key form)',
    yaml: secret('keys', { Authorization: `Bearer sk-${marker('ai')}` }) + `---
apiVersion: switchboard.dev/v1alpha1
kind: ProxyBackend
metadata: { name: openai }
spec:
  ai: { provider: { providerA: { model: gpt-4o } } }
  policies:
    auth: { secretRef: { name: keys } }
    ai: { routes: { /v1/chat/completions: Completions } }
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: llm }
spec:
  parentRefs: [{ name: gw }]
  rules: [{ matches: [{ path: { type: PathPrefix, value: /v1 } }], backendRefs: [{ group: switchboard.dev, kind: ProxyBackend, name: openai }] }]
`,
    secrets: [`Bearer sk-${marker('ai')}`], inIr: `sk-${marker('ai')}`,
  },
  {
    name: 'MCP static target inline policies.auth',
    yaml: secret('docs-key', { Authorization: `Bearer mt-${marker('mcptarget')}` }, 'data') + `---
apiVersion: switchboard.dev/v1alpha1
kind: ProxyBackend
metadata: { name: tools }
spec:
  mcp:
    targets:
      - name: docs
        static: { host: docs.example.com, port: 443, policies: { auth: { secretRef: { name: docs-key } } } }
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: mcp }
spec:
  parentRefs: [{ name: gw }]
  rules: [{ matches: [{ path: { type: PathPrefix, value: /mcp } }], backendRefs: [{ group: switchboard.dev, kind: ProxyBackend, name: tools }] }]
`,
    secrets: [`Bearer mt-${marker('mcptarget')}`], inIr: `mt-${marker('mcptarget')}`,
  },
  {
    name: 'deprecated ProxyBackend spec.policies.mcp.authentication clientSecretRef',
    yaml: secret('idp-client', { clientSecret: `dc-${marker('deprecated')}` }) + `---
apiVersion: switchboard.dev/v1alpha1
kind: ProxyBackend
metadata: { name: tools }
spec:
  mcp: { targets: [{ name: docs, static: { host: docs.example.com, port: 443 } }] }
  policies:
    mcp:
      authentication: { issuer: https://idp.example.com, jwks: { url: https://idp.example.com/certs }, clientId: gw, clientSecretRef: { name: idp-client } }
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: mcp }
spec:
  parentRefs: [{ name: gw }]
  rules: [{ matches: [{ path: { type: PathPrefix, value: /mcp } }], backendRefs: [{ group: switchboard.dev, kind: ProxyBackend, name: tools }] }]
`,
    secrets: [`dc-${marker('deprecated')}`], inIr: `dc-${marker('deprecated')}`,
  },
];

/** The base64 body of a PEM (its lines joined): what is left once the armour is taken off. */
function pemBody(pem: string): string {
  return pem.split('\n').filter((l) => l !== '' && !l.startsWith('-----'))[0];
}

/** Every form a Secret value could take on its way into the IR or a message. */
export function forms(value: string): string[] {
  const out = new Set<string>([value, value.trim(), value.replace(/^Bearer\s+/i, ''), Buffer.from(value).toString('base64'), JSON.stringify(value).slice(1, -1)]);
  for (const line of value.split(/\r?\n/)) if (line.trim().length >= 12 && !line.startsWith('-----')) out.add(line.trim());
  try {
    const parsed: unknown = JSON.parse(value);
    const walk = (v: unknown): void => {
      if (typeof v === 'string' && v.length >= 12) for (const f of forms(v)) out.add(f);
      else if (v !== null && typeof v === 'object') Object.values(v).forEach(walk);
    };
    walk(parsed);
  } catch { /* not JSON */ }
  return [...out].filter((f) => f.length >= 12);
}

function objects(yaml: string): KubeObject[] {
  return parseAllDocuments(BASE + yaml).map((d) => d.toJS() as KubeObject).filter((o) => o !== null);
}

describe('every Secret-fed field is redacted in /config_dump and statuses', () => {
  for (const row of ROWS) {
    it(row.name, () => {
      const { config, statuses, secretPaths } = translate(objects(row.yaml));
      const raw = JSON.stringify(config);
      assert.ok(raw.includes(JSON.stringify(row.inIr).slice(1, -1)), `the Secret value never reached the IR; statuses: ${JSON.stringify(statuses.map((s) => s.status))}`);
      const dump = redactedJson(config, secretPaths);
      const shown = `${dump}\n${JSON.stringify(statuses)}`;
      for (const value of [...row.secrets, ...(row.derived ?? [])]) {
        for (const form of forms(value)) {
          // An EC key's PEM carries its public key, which the (public) certificate carries too.
          if (row.visible?.some((text) => text.includes(form))) continue;
          assert.ok(!shown.includes(form), `${JSON.stringify(form)} shows in /config_dump or a status`);
        }
      }
      assert.ok(dump.includes('[redacted]'));
      for (const text of row.visible ?? []) assert.ok(dump.includes(text.slice(1, -1)), 'a public certificate must stay visible');
    });
  }

  it('redacts by location: an ordinary string equal to nothing secret is left alone', () => {
    const { config, secretPaths } = translate(objects(ROWS[0].yaml));
    const dump = JSON.parse(redactedJson(config, secretPaths)) as typeof config;
    assert.deepEqual(dump.binds.map((b) => b.port), config.binds.map((b) => b.port));
    assert.ok(secretPaths.every((p) => p.includes('/auth/')), `only auth locations: ${secretPaths.join(', ')}`);
  });
});
