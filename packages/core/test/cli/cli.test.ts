import { execFile } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import {
  createHttpHandler,
  createLimiter,
  type HttpHandler,
  type HttpOptions,
  PostgresStore,
  RedisStore,
} from '@sluice/core';
import { Cluster, Redis } from 'ioredis';
import pg from 'pg';
import { describePostgres, type ServerProcess, startPostgres } from '../../../../test/support/postgres.js';
import { describeRedis, formatNodes, sharedCluster, sharedRedis } from '../../../../test/support/redis.js';
import { uniquePrefix } from '../redis/clients.js';

/**
 * The `sluice` bin (package.json `bin`, the built file a user runs) against a real app's keys: an app
 * made with createHttpHandler charges and bans a client on Redis and on a Redis Cluster, and the
 * command, a child process, must find that client from what an operator has (the raw API key, an
 * address), report what the app would decide, and lift it so that the app lets it through.
 */
const CORE = join(__dirname, '../..');
const BIN = join(
  CORE,
  (JSON.parse(readFileSync(join(CORE, 'package.json'), 'utf8')) as { bin: { sluice: string } }).bin.sluice,
);
const CONFIG = join(__dirname, 'app-config.mjs');
/** app-config.mjs with `credentialSecret: process.env.SLUICE_CLI_TEST_APP_SECRET`. */
const CONFIG_SECRET_FROM_ENV = join(__dirname, 'app-config-secret-from-env.mjs');
/** app-config.mjs without `name`, as a module shared with @sluice/fastify's plugin. */
const CONFIG_UNNAMED = join(__dirname, 'app-config-unnamed.mjs');
/** app-config.mjs without `ban`. */
const CONFIG_NO_BAN = join(__dirname, 'app-config-no-ban.mjs');
/** app-config.mjs's options on an ioredis client of a Redis that is down (port 1, a password). */
const CONFIG_UNREACHABLE = join(__dirname, 'app-config-unreachable.mjs');
/** A module exporting a limiter that code calls directly. */
const CONFIG_LIMITER = join(__dirname, 'app-limiter.mjs');
/** What app-config.mjs exports, but its store and prefix. */
const APP_OPTIONS = JSON.parse(
  readFileSync(join(__dirname, 'app-options.json'), 'utf8'),
) as HttpOptions<Req> & {
  policies: unknown[];
};
const KEY = 'sk-live-very-secret-42';
/** For the apps of these tests, which read the store the bin writes as soon as it exits (see setUp). */
const NO_DENY_CACHE = { denyCacheMs: 0 } as const;
// Each test runs the bin four or five times, a Node start each: slow on a loaded machine.
jest.setTimeout(120_000);

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function sluice(args: readonly string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      { env: { ...process.env, ...env }, timeout: 20_000 },
      (error, stdout, stderr) => {
        resolve({ code: error === null ? 0 : Number(error.code ?? -1), stdout, stderr });
      },
    );
  });
}

/** The newest modification time under a directory: a stale build would test old code. */
function newest(dir: string): number {
  return Math.max(
    ...readdirSync(dir, { withFileTypes: true }).map((e) =>
      e.isDirectory() ? newest(join(dir, e.name)) : statSync(join(dir, e.name)).mtimeMs,
    ),
  );
}

/** The app's limiter (app-options.json) as flags, on the store at `storeUrl`. */
function limiterFlags(storeUrl: string, prefix: string): string[] {
  return [
    '--store',
    storeUrl,
    '--prefix',
    prefix,
    '--name',
    'api',
    '--policies',
    JSON.stringify(APP_OPTIONS.policies),
  ];
}

/** A request as the app's reader sees it: an address and an API key header. */
interface Req {
  ip: string;
  key?: string;
}
const reader = {
  ip: (req: Req) => req.ip,
  header: (req: Req, name: string) => (name === 'x-api-key' ? req.key : undefined),
  query: () => undefined,
};

type Backend = 'standalone' | 'cluster' | 'postgres';
const REDIS_BACKENDS: ReadonlyArray<readonly [string, Backend]> = [
  ['Redis', 'standalone'],
  ['Redis Cluster', 'cluster'],
];

describeRedis('sluice inspect and reset (the bin, on a real store)', () => {
  const clients: Array<Redis | Cluster | pg.Pool> = [];
  let postgres: Promise<ServerProcess> | undefined;

  beforeAll(() => {
    expect(statSync(BIN).mtimeMs).toBeGreaterThanOrEqual(newest(join(CORE, 'src')) - 1);
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => ('quit' in c ? c.quit() : c.end())));
    await (await postgres)?.stop();
  });

  /** The stores, and the app on them; `app` options override the app's (a deny cache, for one test). */
  async function setUp(backend: Backend, app: Partial<HttpOptions<Req>> = {}) {
    const prefix = uniquePrefix('cli');
    let store: RedisStore | PostgresStore;
    let storeUrl: string;
    let env: Record<string, string>;
    if (backend === 'postgres') {
      postgres ??= startPostgres();
      storeUrl = (await postgres).url;
      const pool = new pg.Pool({ connectionString: storeUrl, max: 2 });
      clients.push(pool);
      store = new PostgresStore({ client: pool });
      env = { SLUICE_CLI_TEST_POSTGRES: storeUrl, SLUICE_CLI_TEST_PREFIX: prefix };
    } else if (backend === 'standalone') {
      const url = await sharedRedis();
      const client = new Redis(url);
      clients.push(client);
      store = new RedisStore({ client });
      storeUrl = url;
      env = { SLUICE_CLI_TEST_REDIS: url, SLUICE_CLI_TEST_PREFIX: prefix };
    } else {
      const nodes = formatNodes(await sharedCluster());
      const client = new Cluster(
        nodes.split(',').map((n) => ({ host: n.split(':')[0]!, port: Number(n.split(':')[1]) })),
      );
      clients.push(client);
      store = new RedisStore({ client });
      storeUrl = `redis-cluster://${nodes}`;
      env = { SLUICE_CLI_TEST_CLUSTER: nodes, SLUICE_CLI_TEST_PREFIX: prefix };
    }
    // The app: the options of app-config.mjs, on a client of its own. Its calls wait for the store (the
    // default 250 ms, passed on a loaded machine, would have the local fallback decide, and the counts
    // the CLI reads would not be the app's). Its deny cache is off: a reset made by the bin, another
    // process, reaches a running app within denyCacheMs (the test of that is below), and the cases
    // here read what the store holds; with the default 1 s, a run of the bin that ends within 1 s of
    // the app's last denial saw it refused (CI of 185d728).
    const options: HttpOptions<Req> = {
      ...APP_OPTIONS,
      store,
      prefix,
      validate: false,
      storeTimeout: '30s',
      ...NO_DENY_CACHE,
      ...app,
    };
    return { app: createHttpHandler(options, reader) as HttpHandler<Req>, prefix, storeUrl, env, store };
  }

  /** What every store must do alike: run for each Redis deployment, and in PostgreSQL's block below. */
  function storeCases(backend: Backend): void {
    test('--config: finds the banned API key the app hashed, reports it (exit 1), resets it (exit 0), and the app lets it through', async () => {
      const { app, env } = await setUp(backend);
      const statuses: number[] = [];
      for (let i = 0; i < 6; i++) statuses.push((await app.handle({ ip: '203.0.113.9', key: KEY })).status);
      expect(statuses).toEqual([0, 0, 0, 429, 429, 403]);

      const before = await sluice(['inspect', '--config', CONFIG, '--api-key', KEY, '--json'], env);
      expect(before.code).toBe(1);
      const report = JSON.parse(before.stdout);
      expect(report.subject).toBe(await app.subjectOf({ ip: '203.0.113.9', key: KEY }));
      expect(report.allowed).toBe(false);
      const [limiter] = report.limiters;
      expect(limiter.limiter).toBe('api');
      expect(limiter.policies.map((p: { name: string; remaining: number }) => [p.name, p.remaining])).toEqual(
        [
          ['burst', 0],
          ['hourly', 97],
        ],
      );
      expect(limiter.ban.banned).toBe(true);
      expect(limiter.ban.endsInMs).toBeGreaterThan(9 * 60_000);
      expect(limiter.ban.endsInMs).toBeLessThanOrEqual(10 * 60_000);
      // The raw key never leaves the process: it is hashed as the app hashes it.
      expect(before.stdout + before.stderr).not.toContain(KEY);

      const text = await sluice(['inspect', '--config', CONFIG, '--api-key', KEY], env);
      expect(text.code).toBe(1);
      expect(text.stdout).toMatch(/limiter "api": LIMITED, retry in (9m \d+s|10m)/);
      expect(text.stdout).toMatch(/^burst +token-bucket +3 +1m +0 \(denied\)/m);
      expect(text.stdout).toMatch(/^ban: BANNED for /m);

      const reset = await sluice(['reset', '--config', CONFIG, '--api-key', KEY, '--json'], env);
      expect(reset.code).toBe(0);
      expect(JSON.parse(reset.stdout)).toMatchObject({
        command: 'reset',
        limiters: ['api'],
        banLifted: true,
        warnings: [],
      });

      const after = await sluice(['inspect', '--config', CONFIG, '--api-key', KEY, '--json'], env);
      expect(after.code).toBe(0);
      expect(JSON.parse(after.stdout).limiters[0]).toMatchObject({ allowed: true, ban: { banned: false } });
      // No plans: plan is there, null, as the text leaves it out (it was missing from --json).
      expect(JSON.parse(after.stdout).limiters[0].plan).toBeNull();
      expect((await app.handle({ ip: '203.0.113.9', key: KEY })).status).toBe(0);
    });

    // 9f3a714 said banLifted: true of any reset with ban options, banned or not (newcomer review, #28).
    test('reset: banLifted only when a ban was there and is lifted', async () => {
      const { app, env } = await setUp(backend);
      for (let i = 0; i < 4; i++) await app.handle({ ip: '203.0.113.11' });
      const limited = await sluice(['reset', '--config', CONFIG, '--ip', '203.0.113.11', '--json'], env);
      expect(limited.code).toBe(0);
      expect(JSON.parse(limited.stdout)).toMatchObject({ banLifted: false, limiters: ['api'] });
      const text = await sluice(['reset', '--config', CONFIG, '--ip', '203.0.113.12'], env);
      expect(text.stdout).toMatch(/\(it was not banned\)$/m);
      expect(text.stdout).not.toContain('ban lifted');
    });

    // 9f3a714 hashed the key with plain SHA-256 when the module's credentialSecret was unset in the
    // operator's shell, found nothing and said "allowed now" (newcomer review, #28).
    test("--config naming a credentialSecret that is unset here: a warning, not a confident 'allowed now'", async () => {
      const { app, env } = await setUp(backend);
      for (let i = 0; i < 4; i++) await app.handle({ ip: '203.0.113.13', key: KEY });
      const json = await sluice(
        ['inspect', '--config', CONFIG_SECRET_FROM_ENV, '--api-key', KEY, '--json'],
        env,
      );
      expect(json.stderr).toMatch(
        /^sluice: warning: the options name credentialSecret, but it is unset here/m,
      );
      expect(JSON.parse(json.stdout).warnings).toEqual([
        expect.objectContaining({ code: 'CREDENTIAL_SECRET_UNSET' }),
      ]);
      const text = await sluice(['inspect', '--config', CONFIG_SECRET_FROM_ENV, '--api-key', KEY], env);
      expect(text.stdout).toMatch(/limiter "api": allowed now, UNCONFIRMED/);
      // With the variable set, the key is the app's: found, limited, and no warning.
      const found = await sluice(
        ['inspect', '--config', CONFIG_SECRET_FROM_ENV, '--api-key', KEY, '--json'],
        {
          ...env,
          SLUICE_CLI_TEST_APP_SECRET: 'app-secret',
        },
      );
      expect(found.code).toBe(1);
      expect(found.stderr).toBe('');
      expect(JSON.parse(found.stdout).warnings).toEqual([]);
    });

    test('flags instead of a module: --store, the policies, and SLUICE_CREDENTIAL_SECRET find the same key', async () => {
      const { app, prefix, storeUrl } = await setUp(backend);
      for (let i = 0; i < 4; i++) await app.handle({ ip: '203.0.113.10', key: KEY });
      const flags = [...limiterFlags(storeUrl, prefix), '--ban-after', '2', '--ban-for', '10m'];
      const secret = { SLUICE_CREDENTIAL_SECRET: 'app-secret' };
      const seen = await sluice(['inspect', '--api-key', KEY, '--json', ...flags], secret);
      expect(seen.code).toBe(1);
      expect(JSON.parse(seen.stdout).limiters[0]).toMatchObject({ allowed: false, ban: { banned: false } });
      // Without the app's secret the key hashes elsewhere: a subject the app never charged.
      const other = await sluice(['inspect', '--api-key', KEY, '--json', ...flags]);
      expect(other.code).toBe(0);
      expect(JSON.parse(other.stdout).subject).not.toBe(JSON.parse(seen.stdout).subject);
      // ... which the command cannot rule out, and says (it said "allowed now" and no more).
      expect(JSON.parse(other.stdout).warnings).toEqual([
        expect.objectContaining({ code: 'CREDENTIAL_HASH_UNCONFIRMED' }),
        expect.objectContaining({ code: 'NOTHING_COUNTED' }),
      ]);
      expect(other.stderr).toMatch(/^sluice: warning: no credentialSecret given/m);
      expect(JSON.parse(seen.stdout).warnings).toEqual([]);

      expect((await sluice(['reset', '--api-key', KEY, ...flags], secret)).code).toBe(0);
      expect((await app.handle({ ip: '203.0.113.10', key: KEY })).status).toBe(0);
    });

    test('--ip: an address is the subject the app gives it (IPv6 by its /64)', async () => {
      const { app, env } = await setUp(backend);
      for (let i = 0; i < 4; i++) await app.handle({ ip: '2001:db8:1:2::7' });
      const seen = await sluice(['inspect', '--config', CONFIG, '--ip', '2001:db8:1:2::99', '--json'], env);
      expect(seen.code).toBe(1);
      expect(JSON.parse(seen.stdout).subject).toBe('ip:2001:db8:1:2::/64');
      expect(
        (await sluice(['reset', '--config', CONFIG, '--subject', 'ip:2001:db8:1:2::/64'], env)).code,
      ).toBe(0);
      expect((await app.handle({ ip: '2001:db8:1:2::7' })).status).toBe(0);
    });
  }

  describe.each(REDIS_BACKENDS)('%s', (_label, backend) => storeCases(backend));

  // Skipped with a loud warning where PostgreSQL is missing, failed under CI (the shared rule).
  describePostgres('PostgreSQL', () => {
    storeCases('postgres');

    test("postgres://: ?table= names the app's own table; a database without it is exit 3, and none is created", async () => {
      const { prefix, storeUrl } = await setUp('postgres');
      const pool = new pg.Pool({ connectionString: storeUrl, max: 1 });
      clients.push(pool);
      const options: HttpOptions<Req> = {
        ...APP_OPTIONS,
        store: new PostgresStore({ client: pool, table: 'cli_own' }),
        prefix,
        validate: false,
      };
      const app = createHttpHandler(options, reader);
      for (let i = 0; i < 2; i++) await app.handle({ ip: '198.51.100.5' });
      const flags = (table: string) => limiterFlags(`${storeUrl}?table=${table}`, prefix);
      const seen = await sluice(['inspect', '--ip', '198.51.100.5', '--json', ...flags('cli_own')]);
      expect(seen.code).toBe(0);
      expect(JSON.parse(seen.stdout).limiters[0].policies[0]).toMatchObject({ name: 'burst', remaining: 1 });
      const missing = await sluice(['inspect', '--ip', '198.51.100.5', ...flags('cli_none')]);
      expect([missing.code, missing.stderr]).toEqual([3, expect.stringContaining('has no table cli_none')]);
      const created = await pool.query("SELECT to_regclass('cli_none') IS NOT NULL AS found");
      expect(created.rows[0].found).toBe(false);
      const bad = await sluice(['inspect', '--ip', '198.51.100.5', ...flags('no;such')]);
      expect([bad.code, bad.stderr]).toEqual([2, expect.stringContaining('PostgresStore.table')]);
    });

    // Hostile test on fdd233c: a table of the app's (or missing functions) was exit 3 "failed to
    // answer; nothing is known", with no cause, where the Redis path prints one.
    test("a table Sluice did not make is exit 3 with the store error's code and message", async () => {
      const { prefix, storeUrl } = await setUp('postgres');
      const pool = new pg.Pool({ connectionString: storeUrl, max: 1 });
      clients.push(pool);
      await pool.query('CREATE TABLE IF NOT EXISTS cli_foreign (key text PRIMARY KEY, n int)');
      const run = await sluice([
        'inspect',
        '--ip',
        '198.51.100.9',
        ...limiterFlags(`${storeUrl}?table=cli_foreign`, prefix),
      ]);
      expect(run.code).toBe(3);
      expect(run.stderr).toMatch(
        /^sluice: postgres:\/\/.*\?table=cli_foreign failed to answer: ERR_SLUICE_FOREIGN_TABLE: PostgresStore.table: table cli_foreign exists and Sluice did not create it.*; nothing is known$/m,
      );
    });
  });

  // Review 28: with no ban flags and no --config, a subject the app had banned was reported as
  // "ban: none configured": the command had not looked. Failed before the fix.
  test('flags without ban options: the ban is not checked, and says so (text, --json warnings)', async () => {
    const { app, prefix, storeUrl } = await setUp('standalone');
    for (let i = 0; i < 6; i++) await app.handle({ ip: '198.51.100.6' });
    expect((await app.handle({ ip: '198.51.100.6' })).status).toBe(403);
    const args = ['inspect', '--ip', '198.51.100.6', ...limiterFlags(storeUrl, prefix)];
    const text = await sluice(args);
    expect(text.stdout).toMatch(
      /^ban: not checked \(give --ban-after\/--ban-for, or --config with the app's options\)$/m,
    );
    expect(text.stdout).not.toContain('none configured');
    expect(text.stderr).toMatch(/^sluice: warning: ban not checked/m);
    const json = JSON.parse((await sluice([...args, '--json'])).stdout);
    expect(json.limiters[0].ban).toBeNull();
    expect(json.warnings).toEqual([expect.objectContaining({ code: 'BAN_NOT_CHECKED' })]);
  });

  // Hostile test on fdd233c: --subject key:<the raw API key> echoed the key back and said "allowed
  // now" for a client the app was limiting: the app stores key: subjects hashed.
  test.each([['--config'], ['flags']])(
    '--subject key:<raw key> (%s): not echoed, and NOTHING_COUNTED names --api-key',
    async (given) => {
      const { app, prefix, storeUrl, env } = await setUp('standalone');
      for (let i = 0; i < 3; i++) await app.handle({ ip: '198.51.100.8', key: KEY });
      const limiter = given === 'flags' ? limiterFlags(storeUrl, prefix) : ['--config', CONFIG];
      for (const json of [[], ['--json']]) {
        const run = await sluice(['inspect', '--subject', `key:${KEY}`, ...limiter, ...json], env);
        expect(run.code).toBe(0);
        expect(run.stdout + run.stderr).not.toContain(KEY);
        expect(run.stdout).toContain('key:<a string of 22 characters>');
        if (json.length === 0) expect(run.stdout).toContain('allowed now, UNCONFIRMED');
        expect(run.stderr).toMatch(/key: and token: subjects are stored hashed.*--api-key.*--token/);
      }
    },
  );

  // 680f359 answered a --prefix or --algorithm unlike the app's with full quotas, "allowed now" and
  // exit 0, no warning, for a client the app was refusing (newcomer review, #28).
  test("flags unlike the app's (--prefix, --algorithm): 'nothing counted' and NOTHING_COUNTED, not a flat 'allowed now'", async () => {
    const { app, prefix, storeUrl } = await setUp('standalone');
    for (let i = 0; i < 3; i++) await app.handle({ ip: '198.51.100.7' });
    const right = limiterFlags(storeUrl, prefix);
    const slidingLog = APP_OPTIONS.policies.map((p) => ({ ...(p as object), algorithm: 'sliding-log' }));
    const wrong = {
      prefix: limiterFlags(storeUrl, `${prefix}-other`),
      algorithm: [...right.slice(0, -1), JSON.stringify(slidingLog)],
    };
    for (const [label, flags] of Object.entries(wrong)) {
      const json = await sluice(['inspect', '--ip', '198.51.100.7', '--json', ...flags]);
      const report = JSON.parse(json.stdout);
      expect([
        label,
        report.limiters[0].counted,
        report.warnings.map((w: { code: string }) => w.code),
      ]).toEqual([label, false, ['BAN_NOT_CHECKED', 'NOTHING_COUNTED']]);
      expect(json.stderr).toMatch(/^sluice: warning: nothing is counted for this subject under these flags/m);
      const text = await sluice(['inspect', '--ip', '198.51.100.7', ...flags]);
      expect(text.stdout).toMatch(/^limiter "api": allowed now \(nothing counted for this subject\)$/m);
    }
    // The app's own flags find what it counted: no such warning, and no "nothing counted".
    const found = await sluice(['inspect', '--ip', '198.51.100.7', '--json', ...right]);
    expect(JSON.parse(found.stdout).limiters[0].counted).toBe(true);
    expect(JSON.parse(found.stdout).warnings.map((w: { code: string }) => w.code)).toEqual([
      'BAN_NOT_CHECKED',
    ]);
    // A module of the app's options is the app's keys: a subject it never saw is simply not counted.
    const { env } = await setUp('standalone');
    const unseen = await sluice(['inspect', '--config', CONFIG, '--ip', '198.51.100.8', '--json'], env);
    expect(JSON.parse(unseen.stdout)).toMatchObject({ warnings: [], limiters: [{ counted: false }] });
  });

  // Review 28: reset under flags that missed the app's keys (or a subject never seen) printed
  // "reset ... (it was not banned)", exit 0 and no warning, and the client stayed limited and banned.
  test('reset that finds nothing says so: nothing to reset, NOTHING_COUNTED, and no "it was not banned" it did not check', async () => {
    const { app, prefix, storeUrl, env } = await setUp('standalone');
    for (let i = 0; i < 6; i++) await app.handle({ ip: '198.51.100.21' });
    expect((await app.handle({ ip: '198.51.100.21' })).status).toBe(403);
    const wrong = ['reset', '--ip', '198.51.100.21', ...limiterFlags(storeUrl, `${prefix}-other`)];
    const text = await sluice(wrong);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain(
      'nothing was counted for this subject under these options: nothing to reset',
    );
    expect(text.stdout).not.toContain('it was not banned');
    expect(text.stdout).toContain('ban not checked');
    const json = await sluice([...wrong, '--json']);
    expect(JSON.parse(json.stdout)).toMatchObject({ counted: false, banLifted: false });
    expect(JSON.parse(json.stdout).warnings.map((w: { code: string }) => w.code)).toEqual([
      'BAN_NOT_CHECKED',
      'NOTHING_COUNTED',
    ]);
    // The app's own limiter, a subject it never saw: nothing to reset, and the ban was looked up.
    const unseen = await sluice(['reset', '--config', CONFIG, '--ip', '198.51.100.22', '--json'], env);
    expect(JSON.parse(unseen.stdout)).toMatchObject({ counted: false, banLifted: false, warnings: [] });
    const unseenText = await sluice(['reset', '--config', CONFIG, '--ip', '198.51.100.22'], env);
    expect(unseenText.stdout).toMatch(/nothing to reset \(it was not banned\)$/m);
    // The right flags find it: reset, no warning of nothing counted.
    const right = await sluice([
      'reset',
      '--ip',
      '198.51.100.21',
      '--json',
      ...limiterFlags(storeUrl, prefix),
      '--ban-after',
      '2',
      '--ban-for',
      '10m',
    ]);
    expect(JSON.parse(right.stdout)).toMatchObject({ counted: true, banLifted: true, warnings: [] });
    expect((await app.handle({ ip: '198.51.100.21' })).status).toBe(0);
  });

  // Review 28: reset with the app's ban flags but another --algorithm found the ban, lifted it and said
  // "reset ... (its ban lifted too)", exit 0, no warning: the app's counter stayed full, and the client
  // was refused and banned again. Failed on ae2676c (counted: true, warnings []).
  test("reset that lifts a ban but finds no policy's count says so, and warns NOTHING_COUNTED (exit 0)", async () => {
    const { app, prefix, storeUrl } = await setUp('standalone');
    // Two clients the app has banned: one for --json, one for the text.
    for (const ip of ['198.51.100.26', '198.51.100.27']) {
      for (let i = 0; i < 6; i++) await app.handle({ ip });
      expect((await app.handle({ ip })).status).toBe(403);
    }
    const slidingLog = APP_OPTIONS.policies.map((p) => ({ ...(p as object), algorithm: 'sliding-log' }));
    const wrongAlgorithm = [
      ...limiterFlags(storeUrl, prefix).slice(0, -1),
      JSON.stringify(slidingLog),
      '--ban-after',
      '2',
      '--ban-for',
      '10m',
    ];
    const json = await sluice(['reset', '--ip', '198.51.100.26', '--json', ...wrongAlgorithm]);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({ banLifted: true, counted: false });
    expect(JSON.parse(json.stdout).warnings).toEqual([
      expect.objectContaining({
        code: 'NOTHING_COUNTED',
        message: expect.stringContaining(
          'its ban was lifted, but a client the app counts elsewhere is banned again',
        ),
      }),
    ]);
    expect(json.stderr).toMatch(/^sluice: warning: nothing is counted for this subject under these flags/m);
    const text = await sluice(['reset', '--ip', '198.51.100.27', ...wrongAlgorithm]);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(
      /^ip:198\.51\.100\.27 under "api" on .*: its ban lifted, but nothing was counted for this subject under these options: no counter to reset$/m,
    );
    expect(text.stdout).not.toMatch(/^reset /m);
  });

  // Review 28: @sluice/fastify names its global limit 'global' when the options name none, so a module
  // shared with the plugin was read under 'default': "allowed now (nothing counted)", "not banned", no
  // warning, and --name global was refused beside --config.
  test("--config without a name: NOTHING_COUNTED hints at the plugin's 'global', and --name global overrides", async () => {
    const { store, prefix, env } = await setUp('standalone');
    // The plugin's global limit: the module's options, named 'global' by the plugin.
    const { name: _, ...unnamed } = APP_OPTIONS;
    const plugin = createHttpHandler<Req>(
      { ...unnamed, name: 'global', store, prefix, validate: false, ...NO_DENY_CACHE },
      reader,
    );
    for (let i = 0; i < 6; i++) await plugin.handle({ ip: '198.51.100.23' });
    expect((await plugin.handle({ ip: '198.51.100.23' })).status).toBe(403);
    const missed = await sluice(
      ['inspect', '--config', CONFIG_UNNAMED, '--ip', '198.51.100.23', '--json'],
      env,
    );
    expect(JSON.parse(missed.stdout).warnings).toEqual([
      expect.objectContaining({ code: 'NOTHING_COUNTED', message: expect.stringContaining('--name global') }),
    ]);
    expect(missed.stderr).toMatch(/^sluice: warning: .*names its global limit 'global'/m);
    const found = await sluice(
      ['inspect', '--config', CONFIG_UNNAMED, '--name', 'global', '--ip', '198.51.100.23', '--json'],
      env,
    );
    expect(found.code).toBe(1);
    expect(JSON.parse(found.stdout)).toMatchObject({
      warnings: [],
      limiters: [{ limiter: 'global', counted: true, ban: { banned: true } }],
    });
    const reset = await sluice(
      ['reset', '--config', CONFIG_UNNAMED, '--name', 'global', '--ip', '198.51.100.23', '--json'],
      env,
    );
    expect(JSON.parse(reset.stdout)).toMatchObject({ limiters: ['global'], banLifted: true, counted: true });
    expect((await plugin.handle({ ip: '198.51.100.23' })).status).toBe(0);
    // Only --name: the rest of the limiter is the module's.
    const other = await sluice(
      ['inspect', '--config', CONFIG_UNNAMED, '--prefix', 'x', '--ip', '198.51.100.23'],
      env,
    );
    expect([other.code, other.stderr]).toEqual([2, expect.stringContaining('drop --prefix')]);
  });

  // What a running app sees of the bin's reset (docs/operator.md): its own deny cache may answer a
  // client it denied for up to denyCacheMs more, never longer. 300 ms here, to keep the wait short; the
  // wait runs from after the app's last denial, so a loaded machine only makes it longer.
  test('a running app with a deny cache lets the reset client through once its denyCacheMs has passed', async () => {
    const denyCacheMs = 300;
    const { app, env } = await setUp('standalone', { denyCacheMs });
    for (let i = 0; i < 6; i++) await app.handle({ ip: '198.51.100.28' });
    expect((await app.handle({ ip: '198.51.100.28' })).status).toBe(403);
    const deniedAt = Date.now();
    const reset = await sluice(['reset', '--config', CONFIG, '--ip', '198.51.100.28', '--json'], env);
    expect(JSON.parse(reset.stdout)).toMatchObject({ banLifted: true, counted: true });
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, deniedAt + denyCacheMs - Date.now())));
    expect((await app.handle({ ip: '198.51.100.28' })).status).toBe(0);
  });

  // Review 28: reset warned CREDENTIAL_SECRET_UNSET and went ahead (exit 0), resetting a key the app
  // never wrote while the client stayed limited.
  test('reset refuses (exit 2) where the module names a credentialSecret unset here', async () => {
    const { app, env } = await setUp('standalone');
    for (let i = 0; i < 4; i++) await app.handle({ ip: '198.51.100.24', key: KEY });
    const run = await sluice(['reset', '--config', CONFIG_SECRET_FROM_ENV, '--api-key', KEY, '--json'], env);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(/^sluice: reset: .*set the variable the module reads/m);
    expect((await app.handle({ ip: '198.51.100.24', key: KEY })).status).not.toBe(0);
  });

  // Review 28: reset said "(no ban options given, so a ban stays)" of the app's own options without a
  // ban, where inspect says "ban: none configured".
  test('reset --config of options without a ban: the app has no ban', async () => {
    const { app, env } = await setUp('standalone');
    for (let i = 0; i < 2; i++) await app.handle({ ip: '198.51.100.25' });
    const run = await sluice(['reset', '--config', CONFIG_NO_BAN, '--ip', '198.51.100.25'], env);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^reset ip:198\.51\.100\.25 under "api" .*\(the app has no ban\)$/m);
    expect(run.stderr).toBe('');
  });

  // A --subject without a kind is refused for the app's options, never for a limiter's module: code
  // that calls limiter.consume('user-42') counts what it passes.
  test('--config exporting a limiter: --subject takes a subject without a kind', async () => {
    const { store, prefix, env } = await setUp('standalone');
    const limiter = createLimiter({
      store,
      prefix,
      name: 'jobs',
      limit: 5,
      window: '1m',
      storeTimeout: '30s',
    });
    for (let i = 0; i < 2; i++) await limiter.consume('user-42');
    const run = await sluice(['inspect', '--config', CONFIG_LIMITER, '--subject', 'user-42', '--json'], env);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout).limiters[0]).toMatchObject({
      limiter: 'jobs',
      counted: true,
      policies: [{ remaining: 3 }],
    });
  });

  test('valkey:// names the same server (ioredis speaks to Redis and Valkey alike)', async () => {
    const { app, prefix, storeUrl } = await setUp('standalone');
    for (let i = 0; i < 2; i++) await app.handle({ ip: '198.51.100.4' });
    const seen = await sluice([
      'inspect',
      '--ip',
      '198.51.100.4',
      '--json',
      ...limiterFlags(storeUrl.replace(/^redis:/, 'valkey:'), prefix),
    ]);
    expect(seen.code).toBe(0);
    expect(JSON.parse(seen.stdout).limiters[0].policies[0]).toMatchObject({ name: 'burst', remaining: 1 });
  });
});

describe('sluice: answers a script can act on', () => {
  test.each([
    ['redis', /ECONNREFUSED/],
    ['postgres', /ECONNREFUSED/],
  ])('an unreachable %s store is exit 3, its password never printed', async (scheme, why) => {
    const run = await sluice([
      'inspect',
      '--ip',
      '192.0.2.1',
      '--store',
      `${scheme}://ops:hunter2@127.0.0.1:1`,
      '--limit',
      '5',
      '--window',
      '1m',
    ]);
    expect(run.code).toBe(3);
    expect(run.stderr).toMatch(
      new RegExp(`^sluice: cannot reach ${scheme}://ops:\\*\\*\\*@127\\.0\\.0\\.1:1: `),
    );
    expect(run.stderr).toMatch(why);
    expect(run.stderr).not.toContain('hunter2');
  });

  // Hostile test on fdd233c: a '/' or '?' in a password printed the whole URL ("is not a URL"), an
  // '@' in it printed what followed the first '@', ?password= was printed as given, and a module's
  // Cluster of URL startup nodes printed their passwords. Every shape, through the bin.
  test.each([
    ['--store', 'postgres://app:pass/wordSECRET@127.0.0.1:1/db'],
    ['--store', 'redis://:ab/cdSECRET@127.0.0.1:1'],
    ['--store', 'redis://:ab?cdSECRET@127.0.0.1:1'],
    ['--store', 'postgres://app:p@ssSECRET@127.0.0.1:1/db'],
    ['--store', 'redis://:p@ssSECRET@127.0.0.1:1'],
    ['--store', 'redis-cluster://:p@ssSECRET@127.0.0.1:1,127.0.0.1:2'],
    ['--store', 'redis-cluster://127.0.0.1:1?password=qpSECRET'],
    ['--store', 'postgres://app@127.0.0.1:1/db?password=qpSECRET'],
    ['--store', 'postgres://app@127.0.0.1:1/db?sslmode=disable&pass=qpSECRET'],
    ['--store', 'redis://127.0.0.1:1/0?password=qpSECRET'],
    ['--store', 'app:p@ssSECRET@127.0.0.1:1'],
    ['--config', join(__dirname, 'app-config-cluster-url-nodes.mjs')],
    ['--config', join(__dirname, 'app-config-node-redis.mjs')],
  ])('%s %s: no password printed, text or --json', async (flag, value) => {
    const store = flag === '--store' ? ['--limit', '5', '--window', '1m'] : [];
    for (const json of [[], ['--json']]) {
      const run = await sluice(['inspect', '--ip', '192.0.2.1', flag, value, ...store, ...json]);
      expect([run.code, run.stderr]).toEqual([expect.any(Number), expect.stringMatching(/^sluice: /m)]);
      expect(run.stdout + run.stderr).not.toContain('SECRET');
    }
  });

  // Review 28: the module's client, without an error listener as apps make it, printed "[ioredis]
  // Unhandled error event" over and over, and the command's own line said "see the warning above",
  // never where the store was. Failed on ae2676c (the spam, and no address in the exit-3 line).
  test('--config whose store is down: exit 3 naming its address (password hidden), no ioredis spam', async () => {
    const run = await sluice(['inspect', '--config', CONFIG_UNREACHABLE, '--ip', '192.0.2.1']);
    expect(run.code).toBe(3);
    expect(run.stderr).not.toContain('Unhandled error event');
    expect(run.stderr).toMatch(
      /^sluice: redis:\/\/ops:\*\*\*@127\.0\.0\.1:1\/2 \(the store of .*app-config-unreachable\.mjs\) failed to answer: .*ECONNREFUSED/m,
    );
    expect(run.stderr).not.toContain('hunter2');
  });

  // Hostile test on fdd233c: a module's PostgresStore was "the store of <module> failed to answer",
  // with neither its address nor why.
  test('--config whose PostgresStore is down: exit 3 naming its address and table (password hidden) and the cause', async () => {
    const config = join(__dirname, 'app-config-postgres-unreachable.mjs');
    const run = await sluice(['inspect', '--config', config, '--ip', '192.0.2.1']);
    expect(run.code).toBe(3);
    expect(run.stderr).toMatch(
      /^sluice: postgres:\/\/app:\*\*\*@127\.0\.0\.1:1\/db \(table app_limits\) \(the store of .*app-config-postgres-unreachable\.mjs\) failed to answer: .*ECONNREFUSED.*; nothing is known$/m,
    );
    expect(run.stderr).not.toContain('SECRET');
  });

  test.each([
    [
      ['inspect', '--ip', '192.0.2.1', '--store', 'redis://127.0.0.1:1', '--limit', '0', '--window', '1m'],
      /ERR_SLUICE_INVALID_LIMIT/,
    ],
    [['inspect', '--store', 'redis://127.0.0.1:1', '--limit', '5', '--window', '1m'], /whose limit\?/],
    [['inspect', '--ip', '192.0.2.1', '--api-key', 'k', '--store', 'redis://x'], /not --ip and --api-key/],
    [
      ['inspect', '--ip', '192.0.2.1', '--store', 'memcached://x', '--limit', '5', '--window', '1m'],
      /no store for 'memcached:\/\/'/,
    ],
    [
      ['inspect', '--ip', '192.0.2.1', '--config', CONFIG, '--limit', '5'],
      /--config gives the limiter \(only --name may override it\); drop --limit/,
    ],
    // a33bb68 inspected ip:not-an-ip and answered "allowed now", exit 0 (newcomer review).
    [
      ['inspect', '--ip', 'not-an-ip', '--store', 'redis://127.0.0.1:1', '--limit', '5', '--window', '1m'],
      /--ip: "not-an-ip" is not an IP address/,
    ],
    // Review 28: a subject without its kind can never be the app's, and was answered "allowed now".
    [
      ['inspect', '--subject', 'acme', '--store', 'redis://127.0.0.1:1', '--limit', '5', '--window', '1m'],
      /--subject: "acme" has no kind.*ip:, key:, token: or id:.*--id acme/,
    ],
    [['reset', '--subject', 'acme', '--config', CONFIG], /--subject: "acme" has no kind/],
    [['unblock', '--ip', '192.0.2.1'], /unknown command 'unblock'/],
    [['inspect', '--ip', '192.0.2.1', '--frobnicate'], /Unknown option '--frobnicate'/],
    // parseArgs' own text spoke of positionals after '--' (newcomer review, #28).
    [
      ['inspect', '--ip', '192.0.2.1', '--windowMs', '60000'],
      /^sluice: Unknown option '--windowMs': write --window \(milliseconds, or a duration such as '15m'\) \(sluice --help lists the options\)$/m,
    ],
  ])('%j is exit 2 with a message', async (args, message) => {
    const run = await sluice(args);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(message);
    expect(run.stdout).toBe('');
  });
});
