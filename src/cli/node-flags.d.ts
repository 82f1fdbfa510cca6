// Types of node-flags.js (plain JavaScript: it runs before Node's type stripper could be needed).
export declare const SUGGESTED_SEMI_SPACE_MIB: number;
export declare function semiSpaceToSet(input: { command: string | undefined; execArgv: readonly string[]; env: Record<string, string | undefined> }): number | undefined;
export declare function relaunchWithNodeFlags(): void;
