/**
 * The edge entry of @sluice/core, and @sluice/fetch and @sluice/hono over it, bundle for a runtime with
 * no Node built-in (esbuild, platform browser): a `node:` import on their path fails this test before
 * it fails a Worker.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { bundleForEdge, nodeBuiltinsIn } from './bundle.js';

describe('edge bundle', () => {
  it.each([
    ['@sluice/core', 'export * from "@sluice/core";'],
    [
      '@sluice/core (RedisStore, every algorithm)',
      'export { createLimiter, MemoryStore, RedisStore, createHttpHandler } from "@sluice/core";',
    ],
    ['@sluice/fetch', 'export * from "@sluice/fetch";'],
    ['@sluice/hono', 'export * from "@sluice/hono";'],
  ])('%s imports no Node built-in', async (_name, contents) => {
    const bundle = await bundleForEdge(contents);
    expect(nodeBuiltinsIn(bundle)).toEqual([]);
    expect(bundle.code).not.toMatch(/\brequire\(|from\s*["']node:/);
  });

  it("a Node built-in on the edge entry's path fails the bundle", async () => {
    // What this suite guards against: the same bundle over Node's entry (ClusterStore, channels).
    await expect(bundleForEdge('export * from "./packages/core/src/index.ts";')).rejects.toThrow(
      /node:(cluster|diagnostics_channel)/,
    );
  });

  it("the package's conditions send every runtime but Node to the edge entry", () => {
    const pkg = JSON.parse(readFileSync(resolve(__dirname, '../../packages/core/package.json'), 'utf8'));
    const entry = pkg.exports['.'];
    for (const condition of ['workerd', 'edge-light', 'worker', 'browser', 'deno', 'bun', 'default'])
      expect([condition, entry[condition].import.default]).toEqual([condition, './dist/edge.js']);
    expect(entry.node.import.default).toBe('./dist/index.js');
    // Node must not meet an edge condition first.
    const keys = Object.keys(entry);
    expect(keys.indexOf('node')).toBe(keys.length - 2);
  });
});
