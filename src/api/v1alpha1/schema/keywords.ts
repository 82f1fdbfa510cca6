/** Schema keywords of our own. The CRD generator strips them (or translates them) so only OpenAPI reaches Kubernetes. */
export { RULES_KEYWORD } from './rules.ts';
/** A phrase naming what a value must look like ("a Duration such as 15s"), used in error messages. */
export const EXPECTED_KEYWORD = 'x-switchboard-expected';
/** Formats checked in TypeScript only; Kubernetes cannot run them, so the CRD leaves them out. */
export const CEL_FORMAT = 'switchboard-cel';
export const BYTE_SIZE_FORMAT = 'switchboard-byte-size';
export const LOCAL_FORMATS: ReadonlySet<string> = new Set([CEL_FORMAT, BYTE_SIZE_FORMAT]);
