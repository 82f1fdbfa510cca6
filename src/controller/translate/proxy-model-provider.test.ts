import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { forbiddenHost, lowerModelProvider, parseBaseUrl } from './proxy-model-provider.ts';

describe('lowerModelProvider', () => {
  const rows: { name: string; spec: Record<string, unknown>; want?: unknown; error?: RegExp }[] = [
    { name: 'VendorA is providerA at its own address', spec: { provider: 'VendorA' }, want: { providerA: {} } },
    { name: 'VendorD is providerD', spec: { provider: 'VendorD' }, want: { providerD: {} } },
    { name: 'VendorC carries providerC', spec: { provider: 'VendorC', providerC: { resourceName: 'r', resourceType: 'ResourceTypeA' } }, want: { providerC: { resourceName: 'r', resourceType: 'ResourceTypeA' } } },
    { name: 'VendorC without providerC', spec: { provider: 'VendorC' }, error: /spec\.providerC: required/ },
    { name: 'VendorF needs projectId and region', spec: { provider: 'VendorF', providerF: { projectId: 'p' } }, error: /spec\.providerF: projectId and region/ },
    { name: 'VendorF', spec: { provider: 'VendorF', providerF: { projectId: 'p', region: 'r' } }, want: { providerF: { projectId: 'p', region: 'r' } } },
    { name: 'VendorG with a region', spec: { provider: 'VendorG', providerG: { region: 'eu-west-1' } }, want: { providerG: { region: 'eu-west-1' } } },
    { name: 'an OpenAI-compatible vendor at its public base URL', spec: { provider: 'Groq' }, want: { providerA: {}, host: 'api.groq.com', port: 443, pathPrefix: '/openai/v1' } },
    { name: 'DeepSeek at its documented root (no /v1)', spec: { provider: 'DeepSeek' }, want: { providerA: {}, host: 'api.deepseek.com', port: 443, pathPrefix: '' } },
    { name: 'TogetherAI at api.together.ai, as its docs say', spec: { provider: 'TogetherAI' }, want: { providerA: {}, host: 'api.together.ai', port: 443, pathPrefix: '/v1' } },
    { name: 'Ollama needs a baseURL', spec: { provider: 'Ollama' }, error: /spec\.baseURL: required for Ollama/ },
    { name: 'Ollama on a LAN address', spec: { provider: 'Ollama', baseURL: 'http://10.0.0.5:11434/v1' }, want: { providerA: {}, host: '10.0.0.5', port: 11434, pathPrefix: '/v1' } },
    { name: 'baseURL overrides address and base path (providerA)', spec: { provider: 'VendorA', baseURL: 'https://proxy.example.com/openai/' }, want: { providerA: {}, host: 'proxy.example.com', port: 443, pathPrefix: '/openai' } },
    { name: 'baseURL without a path: an empty base path', spec: { provider: 'VendorD', baseURL: 'http://anthropic.example:8080' }, want: { providerD: {}, host: 'anthropic.example', port: 8080, pathPrefix: '' } },
    { name: 'a base path where the provider has no prefix', spec: { provider: 'VendorE', baseURL: 'https://g.example.com/x' }, error: /base path is not supported/ },
    { name: 'baseURL on loopback', spec: { provider: 'VendorA', baseURL: 'http://127.0.0.1:8080/v1' }, error: /loopback/ },
    { name: 'baseURL on the metadata address', spec: { provider: 'Groq', baseURL: 'http://169.254.169.254' }, error: /metadata/ },
    { name: 'baseURL on localhost', spec: { provider: 'Custom', custom: { formats: [{ type: 'Completions' }] }, baseURL: 'http://localhost:9000' }, error: /local or metadata name/ },
    { name: 'Custom on a backendRef may use any path-less baseURL', spec: { provider: 'Custom', custom: { backendRef: { name: 'llm', port: 8000 }, formats: [{ type: 'Completions' }] }, baseURL: 'http://127.0.0.1:8000' }, want: { custom: { backendRef: { name: 'llm', port: 8000 }, formats: [{ type: 'Completions' }] } } },
    { name: 'Custom needs a backendRef or a baseURL', spec: { provider: 'Custom', custom: { formats: [{ type: 'Completions' }] } }, error: /custom\.backendRef or baseURL/ },
    { name: 'https on a non-443 port', spec: { provider: 'VendorA', baseURL: 'https://x.example.com:8443/v1' }, error: /https on a port other than 443/ },
    { name: 'a query', spec: { provider: 'VendorA', baseURL: 'https://x.example.com/v1?a=b' }, error: /query/ },
    { name: 'user info', spec: { provider: 'VendorA', baseURL: 'https://u:p@x.example.com/v1' }, error: /user info/ },
    { name: 'a virtual model is not lowered here', spec: { virtualModel: {} }, error: /spec\.provider: required/ },
  ];
  for (const row of rows) {
    it(row.name, () => {
      const got = lowerModelProvider(row.spec);
      if (row.error) {
        assert.equal(got.provider, undefined);
        assert.match(got.problems.map((p) => p.message).join('; '), row.error);
      } else {
        assert.deepEqual(got.problems, []);
        assert.deepEqual(got.provider, row.want);
      }
    });
  }
});

describe('forbiddenHost', () => {
  const rows: { host: string; forbidden: boolean }[] = [
    { host: '127.0.0.1', forbidden: true },
    { host: '127.9.9.9', forbidden: true },
    { host: '0.0.0.0', forbidden: true },
    { host: '169.254.169.254', forbidden: true },
    { host: '100.100.100.200', forbidden: true },
    { host: '::1', forbidden: true },
    { host: '::ffff:127.0.0.1', forbidden: true },
    { host: 'fe80::1', forbidden: true },
    { host: 'fd00:ec2::254', forbidden: true },
    { host: 'LOCALHOST', forbidden: true },
    { host: 'api.localhost', forbidden: true },
    { host: 'metadata.google.internal.', forbidden: true },
    { host: '10.1.2.3', forbidden: false },
    { host: 'api.openai.com', forbidden: false },
    { host: '2001:db8::1', forbidden: false },
  ];
  for (const row of rows) it(`${row.host}: ${row.forbidden ? 'refused' : 'allowed'}`, () => assert.equal(forbiddenHost(row.host) !== undefined, row.forbidden));

  it('numeric spellings of loopback are normalised by the URL parser before the check', () => {
    for (const text of ['http://2130706433/', 'http://0x7f.0.0.1/', 'http://[::1]:8080/']) {
      const parts = parseBaseUrl(text);
      assert.ok(!('error' in parts), text);
      assert.notEqual(forbiddenHost(parts.host), undefined, text);
    }
  });
});
