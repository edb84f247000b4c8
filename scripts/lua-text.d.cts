/** Types of lua-text.cjs, for the TypeScript that imports it (test/runtimes/bundle.ts). */
export declare function luaText(source: string): string;
export declare function textOf(filename: string, source: string): string;
/** An esbuild plugin (typed loosely: esbuild is not a dependency of every importer). */
export declare const luaPlugin: { name: string; setup(build: unknown): void };
