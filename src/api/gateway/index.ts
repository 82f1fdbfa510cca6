export * from './common.ts';
export type * from './gateway.ts';
export type * from './listenerset.ts';
export type * from './httproute.ts';
export type * from './referencegrant.ts';
export * from './core.ts';
export type * from './proxybackend.ts';
export type * from './object.ts';
