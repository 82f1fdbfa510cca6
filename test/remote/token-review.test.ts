/**
 * The real Authenticator (Kubernetes TokenReview through @kubernetes/client-node) against the fake
 * API server in test/kube, and a RemoteDistributor using it: valid ServiceAccount tokens pass,
 * others do not, answers are cached briefly, and an API server that cannot answer refuses the
 * stream (fail closed).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { create } from '@bufbuild/protobuf';
import { Code, ConnectError, createClient } from '@connectrpc/connect';
import { createGrpcTransport } from '@connectrpc/connect-node';
import { createWritableIterable } from '@connectrpc/connect/protocol';
import { Registry } from 'prom-client';
import { createLogger } from '../../src/common/logger.ts';
import { ConfigDistribution, ConfigRequestSchema, type ConfigRequest } from '../../src/distribute/remote/gen/v1/config_pb.js';
import { RemoteDistributor } from '../../src/distribute/remote/server.ts';
import { TokenReviewAuthenticator } from '../../src/distribute/remote/token-review.ts';
import { FakeApiServer } from '../kube/fake-apiserver.ts';

const REVIEWS = /\/apis\/authentication\.k8s\.io\/v1\/tokenreviews/;

describe('TokenReviewAuthenticator', () => {
  let api: FakeApiServer;
  before(async () => {
    api = await FakeApiServer.start();
    api.tokens.set('sa-token', { username: 'system:serviceaccount:team-a:proxy' });
  });
  after(() => api.close());
  const reviews = (): number => api.requests.filter((r) => r.method === 'POST' && REVIEWS.test(r.path)).length;

  it('answers with the username of a valid token, undefined for any other, and caches valid answers', async () => {
    let now = 1_000;
    const authenticator = new TokenReviewAuthenticator(api.kubeConfig(), { audiences: ['switchboard'], cacheTtlMs: 60_000, now: () => now });
    const before = reviews();
    assert.equal(await authenticator.authenticate('sa-token'), 'system:serviceaccount:team-a:proxy');
    assert.equal(await authenticator.authenticate('sa-token'), 'system:serviceaccount:team-a:proxy');
    assert.equal(reviews() - before, 1, 'the second answer came from the cache');
    const sent = api.requests.filter((r) => REVIEWS.test(r.path)).at(-1)?.body as { spec: { token: string; audiences: string[] } };
    assert.deepEqual(sent.spec, { token: 'sa-token', audiences: ['switchboard'] });
    now += 61_000;
    assert.equal(await authenticator.authenticate('sa-token'), 'system:serviceaccount:team-a:proxy');
    assert.equal(reviews() - before, 2, 'reviewed again once the cached answer expired');
    assert.equal(await authenticator.authenticate('forged'), undefined);
    assert.equal(await authenticator.authenticate('forged'), undefined);
    assert.equal(reviews() - before, 4, 'refusals are not cached');
  });

  it('throws when the API server cannot answer', async () => {
    const authenticator = new TokenReviewAuthenticator(api.kubeConfig());
    api.failNext('POST', REVIEWS, 503);
    await assert.rejects(authenticator.authenticate('sa-token'));
  });

  it('behind a RemoteDistributor: a valid token streams, an unknown one is UNAUTHENTICATED, an unreachable review UNAVAILABLE', async () => {
    const distributor = new RemoteDistributor({ host: '127.0.0.1', port: 0, mode: 'plaintext', authenticator: new TokenReviewAuthenticator(api.kubeConfig(), { cacheTtlMs: 0 }), logger: createLogger({ level: 'silent' }), registry: new Registry() });
    await distributor.start();
    try {
      await distributor.publish({ version: 'v1', binds: [], routes: {}, backends: {} });
      const first = async (token: string) => {
        const requests = createWritableIterable<ConfigRequest>();
        void requests.write(create(ConfigRequestSchema, { kind: { case: 'subscribe', value: { namespace: 'team-a', gateways: ['web'], proxyId: 'p' } } }));
        const client = createClient(ConfigDistribution, createGrpcTransport({ baseUrl: `http://127.0.0.1:${distributor.port}` }));
        const abort = new AbortController();
        try {
          for await (const response of client.streamConfig(requests, { signal: abort.signal, headers: { authorization: `Bearer ${token}` } })) return response;
          return undefined;
        } finally {
          abort.abort();
        }
      };
      assert.ok(await first('sa-token'));
      await assert.rejects(first('forged'), (err: unknown) => ConnectError.from(err).code === Code.Unauthenticated);
      api.failNext('POST', REVIEWS, 500);
      await assert.rejects(first('sa-token'), (err: unknown) => ConnectError.from(err).code === Code.Unavailable);
    } finally {
      await distributor.close();
    }
  });
});
