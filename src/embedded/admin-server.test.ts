import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { createAdminServer, type AdminView } from './admin-server.ts';

const base: AdminView = { config: () => undefined, statuses: () => [], isReady: () => true, secretPaths: () => [] };

async function get(view: AdminView, path: string): Promise<{ status: number; body: unknown }> {
  const server = createAdminServer(view);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`);
    return { status: res.status, body: await res.json() };
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
}

describe('admin /providers', () => {
  it('shows the AI providers health the view gives', async () => {
    const health = [{ backend: 'backend/default/llm', providers: [{ provider: 'east', score: 70, evictedUntil: null }] }];
    assert.deepEqual(await get({ ...base, providerHealth: () => health }, '/providers'), { status: 200, body: { backends: health } });
  });

  it('says where to look instead when the proxies run in other processes (no view)', async () => {
    const { status, body } = await get(base, '/providers');
    assert.equal(status, 404);
    assert.match((body as { error: string }).error, /--workers 1.*switchboard_llm_provider_/);
  });
});

describe('admin /status', () => {
  const status = { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'Gateway', metadata: { name: 'gw', namespace: 'default', uid: 'x' }, status: { conditions: [] } };
  const item = { apiVersion: status.apiVersion, kind: status.kind, metadata: { name: 'gw', namespace: 'default' }, status: status.status };

  it('shows the statuses the view gives, whether at once or asynchronously (the config thread holds them)', async () => {
    assert.deepEqual(await get({ ...base, statuses: () => [status] }, '/status'), { status: 200, body: { items: [item] } });
    assert.deepEqual(await get({ ...base, statuses: async () => [status] }, '/status'), { status: 200, body: { items: [item] } });
  });

  it('answers 503 when the statuses cannot be had', async () => {
    const { status: code, body } = await get({ ...base, statuses: () => Promise.reject(new Error('the config thread restarted')) }, '/status');
    assert.equal(code, 503);
    assert.match((body as { error: string }).error, /restarted/);
  });
});
