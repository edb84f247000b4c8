/**
 * Heap bytes per subject tracked by a MemoryStore with one sliding-window policy.
 *
 *   node --expose-gc test/support/ts-register.cjs packages/core/test/memory/measure-memory.ts [subjects]
 *
 * Prints JSON: { subjects, keys, bytesPerSubject } (default 200,000 subjects). The subjects are
 * strings like 'ip:10.1.2.3' made inside the measured span, so each key's own string counts: a real
 * request's subject is kept as the key too.
 */
import { createLimiter, MemoryStore } from '@sluice/core';

const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('run with --expose-gc');
const subjects = Number(process.argv[2] ?? 200_000);
const now = 1_700_000_000_000;
const store = new MemoryStore({ clock: () => now });
const limiter = createLimiter({ limit: 100, window: '1m', store });
// Every code path (and its allocation sites) runs before the measured span.
for (let i = 0; i < 1000; i++) limiter.decide(`warm-${i}`, 1, 'consume');

gc();
gc();
const before = process.memoryUsage().heapUsed;
for (let i = 0; i < subjects; i++) {
  limiter.decide(`ip:10.${(i >>> 16) & 255}.${(i >>> 8) & 255}.${i & 255}`, 1, 'consume');
}
gc();
gc();
const after = process.memoryUsage().heapUsed;
console.log(JSON.stringify({ subjects, keys: store.size, bytesPerSubject: (after - before) / subjects }));
