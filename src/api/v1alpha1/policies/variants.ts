/** BackendFull and its narrower variants (SPEC.md "BackendFull and its variants"). */
import { Obj, Opt } from '../schema/build.ts';
import { BackendHTTP, BackendTCP, BackendTLS, BackendTunnel } from './connection.ts';
import { BackendAuth } from './auth.ts';
import { BackendAI } from './ai.ts';
import { BackendMCP } from './mcp.ts';
import { Transformation } from './transformation.ts';
import { Health } from './health.ts';
import { ExtAuth } from './ext-auth.ts';

const connection = () => ({ tcp: Opt(BackendTCP()), tls: Opt(BackendTLS()), http: Opt(BackendHTTP()), tunnel: Opt(BackendTunnel()) });

export const BackendConnectionPolicy = (description?: string) => Obj(connection(), { description });

export const BackendSimple = (description?: string) => Obj({ ...connection(), auth: Opt(BackendAuth()) }, { description });

export const BackendWithAI = (description?: string) =>
  Obj({
    ...connection(),
    auth: Opt(BackendAuth()),
    ai: Opt(BackendAI()),
    transformation: Opt(Transformation()),
    health: Opt(Health()),
  }, { description });

export const BackendFull = (description?: string) =>
  Obj({
    ...connection(),
    auth: Opt(BackendAuth()),
    ai: Opt(BackendAI()),
    mcp: Opt(BackendMCP()),
    transformation: Opt(Transformation()),
    health: Opt(Health()),
    extAuth: Opt(ExtAuth()),
  }, { description });
