/** The ext_authz (gRPC) double of the matrix's backend extAuth rows, shared by the Service/ai/mcp and forward proxy files. */
import { create } from '@bufbuild/protobuf';
import { HeaderValueOption_HeaderAppendAction } from '../../../src/proxy/ext/gen/envoy/config/core/v3/base_pb.js';
import { Authorization, CheckResponseSchema } from '../../../src/proxy/ext/gen/envoy/service/auth/v3/external_auth_pb.js';
import { StatusCode } from '../../../src/proxy/ext/gen/envoy/type/v3/http_status_pb.js';
import { startGrpcServer, type RunningServer } from '../../ext/servers.ts';

const overwrite = (key: string, value: string) => ({ header: { key, value }, appendAction: HeaderValueOption_HeaderAppendAction.OVERWRITE_IF_EXISTS_OR_ADD });

/** `x-user: mallory` denied 401, everyone else allowed with `x-backend-auth: <x-user>`. */
export function startAuthz(): Promise<RunningServer> {
  return startGrpcServer((router) => router.service(Authorization, {
    check(req) {
      const user = req.attributes?.request?.http?.headers['x-user'] ?? '';
      if (user === 'mallory') return create(CheckResponseSchema, { status: { code: 7 }, httpResponse: { case: 'deniedResponse', value: { status: { code: StatusCode.Unauthorized }, body: 'not you' } } });
      return create(CheckResponseSchema, { status: { code: 0 }, httpResponse: { case: 'okResponse', value: { headers: [overwrite('x-backend-auth', user)] } } });
    },
  }));
}
