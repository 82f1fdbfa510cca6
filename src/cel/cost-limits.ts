/**
 * The cost limits of CEL evaluation (docs/cel.md "Cost limits"). Neither is configurable: they
 * bound what one expression may do to the process that serves every other request.
 *
 * A cost unit is roughly one step of the evaluator (a node of the expression evaluated once,
 * some 50–100 ns on a current core); sizes are charged per SIZE_UNIT characters or bytes and per
 * list element or map entry, so a unit also stands for a bounded amount of memory.
 */

/**
 * Work one evaluation of one expression may do, in cost units (about 60 ms of CPU). Counted at
 * run time (runtime-budget.ts): every comprehension iteration costs the size of its body, every
 * function and operator call 1 plus the sizes of its arguments and result. Past it the evaluation
 * stops with the CEL error `cost_limit_exceeded`, which each feature resolves as any other
 * evaluation error (authorization fails closed, a transformation answers 500, a log attribute is
 * dropped — failure.ts).
 */
export const RUNTIME_COST_BUDGET = 1_000_000;

/**
 * Worst-case cost (cost-estimate.ts) above which an expression is refused when it is compiled,
 * i.e. at translation: the object holding it gets a status condition naming the field, the
 * estimate and the budget, and the proxy treats the expression as a compile error (fails closed).
 * It is larger than RUNTIME_COST_BUDGET because an estimate over request data assumes the largest
 * request the gateway accepts; such an expression is still bounded per request at run time.
 */
export const STATIC_COST_BUDGET = 100_000_000;

/** Characters (of a string) or bytes that cost one unit to scan, copy or allocate. */
export const SIZE_UNIT = 10;

/**
 * Size bounds the static estimate assumes for data that comes from the request, the largest a
 * request that the gateway accepts with default settings can carry. Sizes count characters or
 * bytes for text and elements or entries for lists and maps.
 */
export const DATA_SIZE_BOUNDS = {
  /** A buffered body: frontend `http.maxBufferSize` default 2 MiB (SPEC.md). */
  body: 2 * 1024 * 1024,
  /** Header entries: frontend `http.http1MaxHeaders` default 100. */
  headerCount: 100,
  /** All header bytes together (and so one header value, a JWT, an API key's metadata): 64 KiB. */
  headerBytes: 64 * 1024,
  /** Anything else read from the request or its context (path, query, claims): bounded by headerBytes. */
  other: 64 * 1024,
} as const;
