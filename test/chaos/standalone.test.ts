import { Redis } from 'ioredis';
import { describeRedis, type RedisProcess, startRedis } from '../support/redis.js';
import {
  burst,
  contractBreaches,
  healthProblems,
  lateRecoveries,
  limitsOnRedis,
  localLimitBreaches,
  RECOVERY_MS,
  report,
  sawDegraded,
  sleep,
} from './contract.js';
import { Load, type Sample } from './load.js';
import { type AppServer, type Framework, type Mode, startServer } from './servers.js';

/**
 * Express and Fastify servers, one process per onStoreError mode, on one redis-server of their own,
 * under steady load while the suite (a) kills Redis with SIGKILL and starts it again, (b) pauses it
 * with SIGSTOP past storeTimeout, and (c) flushes its script cache. Every server must stay up
 * with no unhandled rejection, answer every request within storeTimeout + 100 ms with the statuses
 * its mode promises, and decide on Redis again within 2 s of each recovery.
 */
// beforeAll starts six servers (up to START_TIMEOUT_MS of servers.ts on a loaded machine), then runs the faults.
jest.setTimeout(180_000);

const STORE_TIMEOUT_MS = 200;
const LIMIT = 20;
const DOWN_MS = 1500;
const PAUSE_MS = 1500;
const FRAMEWORKS: Framework[] = ['express', 'fastify'];
const MODES: Mode[] = ['local', 'allow', 'deny'];
const LABELS = FRAMEWORKS.flatMap((f) => MODES.map((m) => `${f}/${m}`));

describeRedis('chaos on a standalone Redis', () => {
  let redis: RedisProcess;
  let admin: Redis;
  let servers: AppServer[] = [];
  let load: Load;
  const at = { killed: 0, restarted: 0, paused: 0, unpaused: 0, flushed: 0, end: 0 };
  /** What each 'local' server answered a fresh subject while Redis was down. */
  const outage = new Map<string, Sample[]>();
  const server = (label: string) => servers.find((s) => s.label === label)!;

  beforeAll(async () => {
    redis = await startRedis();
    servers = await Promise.all(
      FRAMEWORKS.flatMap((framework) =>
        MODES.map((mode) =>
          startServer({
            framework,
            mode,
            storeTimeoutMs: STORE_TIMEOUT_MS,
            limit: LIMIT,
            prefix: `chaos-${framework}-${mode}`,
            redis: { REDIS_URL: redis.url },
          }),
        ),
      ),
    );
    load = new Load(servers);
    load.start();
    await sleep(1000);

    at.killed = Date.now();
    await redis.kill();
    const bursts = servers
      .filter((s) => s.mode === 'local')
      .map(async (s) => outage.set(s.label, await burst(s, `outage-${s.label}`, LIMIT + 1)));
    await Promise.all([sleep(DOWN_MS), ...bursts]);
    await redis.restart();
    at.restarted = Date.now();
    await sleep(RECOVERY_MS + 1000);

    // Stalled (SIGSTOP) from the moment marked to the moment marked: a CLIENT PAUSE began when its
    // command arrived, which at load 16 was well after the mark, and the degraded answers fell after
    // the window the test judged.
    at.paused = Date.now();
    redis.pause();
    await sleep(PAUSE_MS);
    redis.resume();
    at.unpaused = Date.now();
    await sleep(RECOVERY_MS + 1000);

    admin = new Redis(redis.url);

    at.flushed = Date.now();
    await admin.script('FLUSH');
    await sleep(1500);
    at.end = Date.now();
    await load.stop();
    console.log(await report(load, servers, at));
  });

  afterAll(async () => {
    await Promise.all(servers.map((s) => s.stop()));
    admin?.disconnect();
    await redis?.stop();
  });

  describe.each(LABELS)('%s', (label) => {
    it('stays up, with no unhandled rejection and no answer slower than storeTimeout + 100 ms', async () => {
      expect(await healthProblems(server(label))).toEqual([]);
    });

    it('answers every request with the statuses its mode promises', () => {
      const samples = load.of(label);
      // Enough answers to judge (a loaded machine sent 98 in this run, an idle one several hundred).
      expect(samples.length).toBeGreaterThan(50);
      expect(contractBreaches(samples, server(label).mode)).toEqual([]);
    });

    it('degrades while Redis is killed, and decides on Redis within 2 s of its restart', () => {
      expect(sawDegraded(load, server(label), at.killed, at.restarted)).toBe(true);
      // A request in flight when Redis was stalled meets the stall: the window ends an answer's bound
      // (storeTimeout + 100 ms) before it (CI on 387a5c2: degraded answers 3,027 ms after the restart,
      // sent as the SIGSTOP came).
      expect(lateRecoveries(load, server(label), at.restarted, at.paused - STORE_TIMEOUT_MS - 100)).toEqual(
        [],
      );
    });

    it('degrades while Redis is paused past storeTimeout, and decides on Redis within 2 s after', () => {
      expect(sawDegraded(load, server(label), at.paused, at.unpaused)).toBe(true);
      expect(lateRecoveries(load, server(label), at.unpaused, at.flushed)).toEqual([]);
    });

    if (label.endsWith('/local')) {
      it('limits in process while Redis is down', () => {
        expect(localLimitBreaches(outage.get(label) ?? [], LIMIT)).toEqual([]);
      });
    }

    it('does not notice a flushed script cache', () => {
      const after = load.of(label, at.flushed, at.end);
      expect(after.length).toBeGreaterThan(10);
      expect(after.filter((s) => s.degraded || s.failed)).toEqual([]);
    });

    it('limits on Redis afterwards', async () => {
      expect(await limitsOnRedis(server(label), LIMIT)).toEqual([]);
    });
  });
});
