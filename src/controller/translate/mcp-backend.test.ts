import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../api/gateway/object.ts';
import { translateMcpBackend } from './mcp-backend.ts';
import { indexObjects } from './snapshot.ts';

function proxyBackend(spec: unknown): KubeObject {
  return { apiVersion: 'switchboard.dev/v1alpha1', kind: 'ProxyBackend', metadata: { name: 'tools', namespace: 'ai', generation: 3 }, spec };
}

function service(name: string, namespace: string, labels: Record<string, string>, ports: { port: number; appProtocol?: string }[]): KubeObject {
  return { apiVersion: 'v1', kind: 'Service', metadata: { name, namespace, labels }, spec: { ports } };
}

const objects = [
  service('search', 'ai', { mcp: 'yes' }, [{ port: 8080 }, { port: 9090, appProtocol: 'mcp-sse' }]),
  service('files', 'ai', {}, [{ port: 3000 }]),
  service('remote', 'other', { mcp: 'yes' }, [{ port: 80 }]),
  { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'other', labels: { team: 'x' } } },
];
const snapshot = indexObjects(objects);

describe('translateMcpBackend', () => {
  it('resolves static hosts, Service backendRefs and selectors with defaults', () => {
    const { ir, problems, conditions } = translateMcpBackend(proxyBackend({
      mcp: {
        prefixMode: 'Always',
        targets: [
          { name: 'web', static: { host: 'mcp.example.com', port: 443, protocol: 'SSE', policies: { tls: { insecureSkipVerify: 'All' } } } },
          { name: 'files', static: { backendRef: { name: 'files' }, port: 3000, path: '/rpc' } },
          { name: 'sel', selector: { services: { matchLabels: { mcp: 'yes' } } } },
        ],
      },
      policies: { mcp: { authorization: { action: 'Require', policy: { matchExpressions: ['mcp.tool.name != "rm"'] } } } },
    }), snapshot);
    assert.deepEqual(problems, []);
    assert.equal(conditions[0].status, 'True');
    assert.deepEqual(ir, {
      key: 'backend/ai/tools',
      sessionRouting: 'Stateful',
      failureMode: 'FailClosed',
      prefixMode: 'Always',
      authorization: [{ action: 'Require', matchExpressions: ['mcp.tool.name != "rm"'] }],
      targets: [
        { name: 'web', host: 'mcp.example.com', port: 443, path: '/sse', protocol: 'SSE', policies: { tls: { insecureSkipVerify: 'All' }, sources: { tls: ['ProxyBackend/ai/tools#web'] } } },
        { name: 'files', host: 'files.ai.svc.cluster.local', port: 3000, path: '/rpc', protocol: 'StreamableHTTP' },
        { name: 'sel-search-8080', section: 'sel', host: 'search.ai.svc.cluster.local', port: 8080, path: '/mcp', protocol: 'StreamableHTTP' },
        { name: 'sel-search-9090', section: 'sel', host: 'search.ai.svc.cluster.local', port: 9090, path: '/sse', protocol: 'SSE' },
      ],
    });
  });

  it('a namespace selector reaches other namespaces; names carry the namespace', () => {
    const { ir } = translateMcpBackend(proxyBackend({ mcp: { targets: [{ name: 's', selector: { namespaces: { matchLabels: { team: 'x' } }, services: { matchLabels: { mcp: 'yes' } } } }] } }), snapshot);
    assert.deepEqual(ir?.targets.map((t) => t.name), ['s-other-remote-80']);
  });

  describe('Service targets carry the ready endpoints of their port', () => {
    const slice = (name: string, service: string, port: number, endpoints: { addresses: string[]; ready?: boolean }[]): KubeObject => ({
      apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', metadata: { name, namespace: 'ai', labels: { 'kubernetes.io/service-name': service } },
      addressType: 'IPv4', ports: [{ name: 'mcp', port }],
      endpoints: endpoints.map((e) => ({ addresses: e.addresses, ...(e.ready === false ? { conditions: { ready: false } } : {}) })),
    });
    const svc = (type?: string): KubeObject => ({
      apiVersion: 'v1', kind: 'Service', metadata: { name: 'replicas', namespace: 'ai', labels: { pin: 'yes' } },
      spec: { ...(type ? { type, externalName: 'mcp.example.com' } : {}), ports: [{ name: 'mcp', port: 80, targetPort: 3000 }] },
    });
    const rows = [
      {
        name: 'two slices, a not-ready address left out, sorted',
        objects: [svc(), slice('b', 'replicas', 3001, [{ addresses: ['10.0.0.2'] }]), slice('a', 'replicas', 3000, [{ addresses: ['10.0.0.9', '10.0.0.1'] }, { addresses: ['10.0.0.5'], ready: false }])],
        endpoints: [{ host: '10.0.0.1', port: 3000 }, { host: '10.0.0.2', port: 3001 }, { host: '10.0.0.9', port: 3000 }],
      },
      { name: 'no EndpointSlice: the DNS name only', objects: [svc()], endpoints: undefined },
      { name: 'only not-ready endpoints: the DNS name only', objects: [svc(), slice('a', 'replicas', 3000, [{ addresses: ['10.0.0.1'], ready: false }])], endpoints: undefined },
      { name: 'ExternalName: the DNS name only', objects: [svc('ExternalName'), slice('a', 'replicas', 3000, [{ addresses: ['10.0.0.1'] }])], endpoints: undefined },
    ];
    for (const row of rows) {
      it(row.name, () => {
        const snap = indexObjects(row.objects);
        const { ir } = translateMcpBackend(proxyBackend({ mcp: { targets: [{ name: 'st', static: { backendRef: { name: 'replicas' }, port: 80 } }, { name: 'sel', selector: { services: { matchLabels: { pin: 'yes' } } } }] } }), snap);
        assert.equal(ir?.targets.length, 2);
        for (const t of ir?.targets ?? []) {
          assert.equal(t.host, 'replicas.ai.svc.cluster.local', t.name);
          assert.deepEqual(t.endpoints, row.endpoints, t.name);
        }
      });
    }
  });

  const broken = [
    { name: 'missing Service', target: { name: 'x', static: { backendRef: { name: 'nope' }, port: 1 } }, reason: 'BackendNotFound' },
    { name: 'Service without the port', target: { name: 'x', static: { backendRef: { name: 'files' }, port: 1 } }, reason: 'BackendNotFound' },
    { name: 'selector matching nothing', target: { name: 'x', selector: { services: { matchLabels: { none: 'x' } } } }, reason: 'BackendNotFound' },
  ];
  for (const c of broken) {
    it(`${c.name}: condition False, other targets still served`, () => {
      const { ir, conditions } = translateMcpBackend(proxyBackend({ mcp: { targets: [c.target, { name: 'ok', static: { host: 'h', port: 80 } }] } }), snapshot);
      assert.equal(conditions[0].status, 'False');
      assert.equal(conditions[0].reason, c.reason);
      assert.deepEqual(ir?.targets.map((t) => t.name), ['ok']);
    });
  }

  it('no IR when no target resolves; a bad expression is reported', () => {
    const { ir, conditions } = translateMcpBackend(proxyBackend({
      mcp: { targets: [{ name: 'x', static: { backendRef: { name: 'nope' }, port: 1 } }] },
      policies: { mcp: { authorization: { policy: { matchExpressions: ['mcp.tool.name =='] } } } },
    }), snapshot);
    assert.equal(ir, undefined);
    assert.match(conditions[0].message, /Service ai\/nope not found; spec.policies.mcp.authorization/);
  });
  it('serves the deprecated policies.mcp.authentication (mapped by the policy translator) and says it is deprecated', () => {
    const cases = [
      {
        name: 'valid: Accepted stays True, with the deprecation in the message',
        auth: { issuer: 'https://idp', jwks: { url: 'https://idp/jwks' }, provider: 'idp_2' },
        status: 'True', reason: 'Accepted', message: /^MCP backend accepted; spec.policies.mcp.authentication is deprecated: .*ProxyPolicy traffic.jwtAuthentication.mcp$/,
      },
      {
        name: 'no issuer: InvalidPolicy, routes fail closed',
        auth: { jwks: { url: 'https://idp/jwks' } },
        status: 'False', reason: 'InvalidPolicy', message: /spec.policies.mcp.authentication.issuer is required .*fail closed.*; spec.policies.mcp.authentication is deprecated/,
      },
      {
        name: 'missing client Secret: InvalidPolicy',
        auth: { issuer: 'https://idp', jwks: { url: 'https://idp/jwks' }, clientId: 'c', clientSecretRef: { name: 'nope' } },
        status: 'False', reason: 'InvalidPolicy', message: /clientSecretRef: Secret ai\/nope not found/,
      },
    ];
    for (const c of cases) {
      const { ir, conditions } = translateMcpBackend(proxyBackend({
        mcp: { targets: [{ name: 'ok', static: { host: 'h', port: 80 } }] },
        policies: { mcp: { authentication: c.auth } },
      }), snapshot);
      assert.ok(ir, `${c.name}: the backend is served`);
      assert.equal(conditions[0].status, c.status, c.name);
      assert.equal(conditions[0].reason, c.reason, c.name);
      assert.match(conditions[0].message, c.message, c.name);
    }
  });
  it('translates guardrail processors (url, Service backendRef, unresolved kept fail-closed)', () => {
    const { ir, problems } = translateMcpBackend(proxyBackend({
      mcp: { targets: [{ name: 'web', static: { host: 'mcp.example.com', port: 80 } }] },
      policies: {
        mcp: {
          guardrails: {
            processors: [
              {
                remote: { url: 'http://guard.example.com:9000/', failureMode: 'FailOpen', metadata: { who: 'jwt.sub' }, allowedRequestHeaders: ['X-Caller'], disallowedRequestHeaders: ['Authorization'] },
                methods: { 'tools/*': 'Full', '*/list': 'Response' },
              },
              { remote: { backendRef: { name: 'files', port: 3000 } }, methods: { '*': 'Request' } },
              { remote: { backendRef: { name: 'missing', port: 1 } }, methods: { 'tools/call': 'Bogus' } },
            ],
          },
        },
      },
    }), snapshot);
    assert.deepEqual(ir?.guardrails, [
      {
        url: 'http://guard.example.com:9000', failureMode: 'FailOpen', methods: { 'tools/*': 'Full', '*/list': 'Response' },
        metadata: { who: 'jwt.sub' }, allowedRequestHeaders: ['x-caller'], disallowedRequestHeaders: ['authorization'],
      },
      { url: 'http://files.ai.svc.cluster.local:3000', failureMode: 'FailClosed', methods: { '*': 'Request' } },
      { url: '', failureMode: 'FailClosed', methods: {} },
    ]);
    assert.deepEqual(problems.map((p) => p.reason), ['BackendNotFound', 'Invalid']);
  });

  it('a guardrail Service backendRef with ready endpoints is reached at one of them (no cluster DNS in embedded mode)', () => {
    const snap = indexObjects([
      service('guard', 'ai', {}, [{ port: 9000 }]),
      { apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', metadata: { name: 'guard-1', namespace: 'ai', labels: { 'kubernetes.io/service-name': 'guard' } }, addressType: 'IPv4', ports: [{ port: 19000 }], endpoints: [{ addresses: ['127.0.0.7'] }] },
    ]);
    const { ir } = translateMcpBackend(proxyBackend({
      mcp: { targets: [{ name: 'web', static: { host: 'mcp.example.com', port: 80 } }] },
      policies: { mcp: { guardrails: { processors: [{ remote: { backendRef: { name: 'guard', port: 9000 } }, methods: { '*': 'Request' } }] } } },
    }), snap);
    assert.equal(ir?.guardrails?.[0]?.url, 'http://127.0.0.7:19000');
  });

  describe('a static target\'s inline policies (BackendSimple, host targets only)', () => {
    const secrets = [
      { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'mcp-key', namespace: 'ai' }, data: { Authorization: Buffer.from('Bearer k-123').toString('base64') } },
      { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'mcp-ca', namespace: 'ai' }, data: { 'ca.crt': Buffer.from('-----BEGIN CERTIFICATE-----\nCA\n-----END CERTIFICATE-----\n').toString('base64') } },
    ];
    const withSecrets = indexObjects([...objects, ...secrets] as KubeObject[]);
    const source = ['ProxyBackend/ai/tools#t'];
    const cases: { name: string; target: Record<string, unknown>; policies?: unknown; problem?: RegExp }[] = [
      {
        name: 'auth secretRef resolved at translate time (Bearer stripped from the default key), requestTimeout in ms',
        target: { host: 'mcp.example.com', port: 443, policies: { auth: { secretRef: { name: 'mcp-key' } }, http: { requestTimeout: '2s' } } },
        policies: { auth: { key: 'k-123' }, http: { requestTimeoutMs: 2000 }, sources: { auth: source, http: source } },
      },
      {
        name: 'an inline key at a header location, plus an extra credential from a Secret',
        target: { host: 'mcp.example.com', port: 80, policies: { auth: { key: 'inline', location: { header: { name: 'X-Api-Key' } }, credentials: [{ location: { queryParameter: { name: 'token' } }, secretRef: { name: 'mcp-key', key: 'Authorization' } }] } } },
        policies: { auth: { key: 'inline', location: { header: { name: 'X-Api-Key' } }, credentials: [{ location: { queryParameter: { name: 'token' } }, value: 'Bearer k-123' }] }, sources: { auth: source } },
      },
      {
        name: 'a CA from a Secret',
        target: { host: 'mcp.example.com', port: 443, policies: { tls: { caCertificateRefs: [{ kind: 'Secret', name: 'mcp-ca' }], sni: 'internal.example' } } },
        policies: { tls: { sni: 'internal.example', caCertificatePem: '-----BEGIN CERTIFICATE-----\nCA\n-----END CERTIFICATE-----\n' }, sources: { tls: source } },
      },
      { name: 'policies with a backendRef are refused', target: { backendRef: { name: 'files' }, port: 3000, policies: { auth: { key: 'x' } } }, problem: /static.policies may only be set on a host-based target .*target t is not served/ },
      { name: 'a missing Secret leaves the target out', target: { host: 'h', port: 1, policies: { auth: { secretRef: { name: 'nope' } } } }, problem: /Secret ai\/nope not found \(target t is not served\)/ },
      { name: 'members outside BackendSimple are refused', target: { host: 'h', port: 1, policies: { extAuth: {} } }, problem: /policies.extAuth: not allowed on an MCP target/ },
    ];
    for (const c of cases) {
      it(c.name, () => {
        const { ir, problems } = translateMcpBackend(proxyBackend({ mcp: { targets: [{ name: 't', static: c.target }, { name: 'other', static: { host: 'o', port: 1 } }] } }), withSecrets);
        const target = ir?.targets.find((t) => t.name === 't');
        if (c.problem) {
          assert.equal(target, undefined);
          assert.match(problems.map((p) => p.message).join('; '), c.problem);
        } else {
          assert.deepEqual(problems, []);
          assert.deepEqual(target?.policies, c.policies);
        }
      });
    }
  });
});
