import type { IncomingHttpHeaders } from 'node:http';
import { fakePolicyContext, type FakePolicyContext } from './policy-context.ts';
import type { RequestIdentity } from '../policies/context.ts';

/** What a unit test of an authentication step says about a request; the rest has plain defaults. */
export interface TestRequest {
  readonly method?: string;
  readonly path?: string;
  readonly query?: string;
  readonly headers?: IncomingHttpHeaders;
  readonly body?: string;
  readonly identity?: RequestIdentity;
}

/** The shared in-memory PolicyContext (src/proxy/testing/policy-context.ts) with an identity already established. */
export function testContext(r: TestRequest = {}): FakePolicyContext {
  const ctx = fakePolicyContext(r);
  Object.assign(ctx.identity, r.identity);
  return ctx;
}
