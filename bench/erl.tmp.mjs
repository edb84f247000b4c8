import { MemoryStore } from 'express-rate-limit';
import { RateLimiterMemory } from 'rate-limiter-flexible';

const many = [];
for (let i = 0; i < 100000; i++) many.push(`10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`);
const erl = new MemoryStore();
erl.init({ windowMs: 60000 });
const rlf = new RateLimiterMemory({ points: 1e9, duration: 60 });
for (const s of many) {
  await erl.increment(s);
  await rlf.consume(s);
}
async function time(label, fn) {
  const best = [];
  for (let r = 0; r < 5; r++) {
    const t = process.cpuUsage();
    await fn();
    const u = process.cpuUsage(t);
    best.push((u.user + u.system) * 1000);
  }
  best.sort((a, b) => a - b);
  console.log(label.padEnd(24), (((1e6 / best[2]) * 1e9) / 1e6).toFixed(2), 'M/s');
}
const N = 1e6;
await time('erl hot', async () => {
  for (let i = 0; i < N; i++) await erl.increment('hot');
});
await time('erl 100k', async () => {
  let n = 0;
  for (let i = 0; i < N; i++) {
    await erl.increment(many[n]);
    if (++n === many.length) n = 0;
  }
});
await time('rlf hot', async () => {
  for (let i = 0; i < N; i++) await rlf.consume('hot');
});
await time('rlf 100k', async () => {
  let n = 0;
  for (let i = 0; i < N; i++) {
    await rlf.consume(many[n]);
    if (++n === many.length) n = 0;
  }
});
process.exit(0);
