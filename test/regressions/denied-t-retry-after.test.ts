import { MemoryStore } from '@sluice/core';
import { eachFramework } from '../adapters/frameworks.js';
import { get, serving } from '../adapters/support.js';

// A sliding-window denial said `t=8` with `Retry-After: 11`: a client that waited for `t` was refused
// again. API.md r2: a denying policy's resetMs is at least its retry time. Concurrency policies were
// advertised as a rate (`q=2;w=300`, `t=0`). Failed on 13f5928 (on Express then; on every framework of
// the shared suite now).
describe.each(eachFramework)('%s: a denied answer', (_name, framework) => {
  const start = serving(framework);

  it('never tells a client to come back before it would be allowed', async () => {
    let now = 1_700_000_000_000 + 52_000; // 52 s into a 60 s window
    const app = await start({ limit: 3, window: '1m', store: new MemoryStore({ clock: () => now }) });
    for (let i = 0; i < 3; i++) expect((await get(app, '/ok')).status).toBe(200);
    const denied = await get(app, '/ok');
    expect(denied.status).toBe(429);
    const retryAfter = Number(denied.headers['retry-after']);
    const t = Number(/;t=(\d+)/.exec(String(denied.headers.ratelimit))![1]);
    expect(t).toBeGreaterThanOrEqual(retryAfter);
    now += t * 1000;
    expect((await get(app, '/ok')).status).toBe(200);
  });

  it('of a concurrency policy names concurrent requests, with no window and no t', async () => {
    const app = await start({ limit: 2, window: '5m', algorithm: 'concurrency' });
    const answer = await get(app, '/ok');
    expect(answer.headers['ratelimit-policy']).toBe('"2-concurrent";q=2;qu="concurrent-requests"');
    expect(answer.headers.ratelimit).toBe('"2-concurrent";r=1');
  });
});
