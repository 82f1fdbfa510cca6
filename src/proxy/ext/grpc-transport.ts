// connect-node as an ES module, for lazyModule (endpoint.ts): `require` of the package itself would
// load its CommonJS build — a second connect-rpc, whose errors and classes the ES build's clients
// do not recognise (ConnectError.from would make every code Unknown).
export { createGrpcTransport, Http2SessionManager } from '@connectrpc/connect-node';
