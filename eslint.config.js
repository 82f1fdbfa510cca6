import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/**', 'dist/**', 'chart/**', 'coverage/**', 'src/proxy/ext/gen/**', 'src/proxy/mcp/guardrails/gen/**', 'src/distribute/remote/gen/**', 'src/api/vendor/**', 'test/otlp/gen/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly', Buffer: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', setInterval: 'readonly', clearInterval: 'readonly', setImmediate: 'readonly', URL: 'readonly', TextEncoder: 'readonly', TextDecoder: 'readonly', AbortController: 'readonly', queueMicrotask: 'readonly', structuredClone: 'readonly' } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-restricted-imports': ['error', { patterns: [] }],
    },
  },
  {
    // The data plane must never depend on the control plane (DESIGN.md: imports go downstream only).
    files: ['src/proxy/**/*.ts', 'src/ir/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ group: ['**/controller/**', '**/sources/**'], message: 'the proxy and IR never import the controller' }] }],
    },
  },
);
