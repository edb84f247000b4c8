import { createLimiter, ErrorCodes, RedisStore } from '@sluice/core';
import { configError as errorOf } from '../support/config-error.js';

// Review 28: rate-limiter-flexible's RateLimiterPostgres options pasted into createLimiter were told
// to use RedisStore (storeClient, even for a pg Pool) or that the table was none of Sluice's business;
// rate-limit-redis's new RedisStore({ sendCommand, prefix }) got a bare "unknown option; expected
// client or clock". Each test failed before the fix.

const base = { limit: 1, window: '1m' };
const limiterError = (options: Record<string, unknown>) =>
  errorOf(() => createLimiter({ ...base, ...options } as never));
// pg's shapes, as PostgresStore tells them apart (pg itself is not imported).
const pgPool = { query: () => Promise.resolve({ rows: [] }), on: () => undefined, totalCount: 0 };
const pgClient = {
  query: () => Promise.resolve({ rows: [] }),
  on: () => undefined,
  connectionParameters: {},
};
const postgresJs = Object.assign(() => undefined, { unsafe() {}, begin() {}, end() {} });

describe("rate-limiter-flexible's Postgres options in createLimiter", () => {
  test.each([
    ['a pg Pool', pgPool],
    ['a pg Client', pgClient],
    ['a postgres.js sql', postgresJs],
  ])('storeClient: %s is told store: new PostgresStore({ client })', (_, client) => {
    const error = limiterError({ storeClient: client });
    expect(error).toMatchObject({ code: ErrorCodes.UNKNOWN_OPTION, option: 'storeClient' });
    expect(error.message).toContain('write `store` instead: store: new PostgresStore({ client })');
    expect(error.message).not.toContain('RedisStore');
  });

  test('storeClient: a Redis client is still told RedisStore', () => {
    const redis = { sendCommand() {}, status: 'ready' };
    expect(limiterError({ storeClient: redis }).message).toContain('store: new RedisStore({ client })');
  });

  test("tableName is PostgresStore's table, with their name", () => {
    const { message } = limiterError({ tableName: 'rate_limits_v2' });
    expect(message).toContain("store: new PostgresStore({ client, table: 'rate_limits_v2' })");
  });

  test('tableCreated is createTable: false, PostgresStore.schema() for migrations', () => {
    const { message } = limiterError({ tableCreated: true });
    expect(message).toContain('new PostgresStore({ client, createTable: false })');
    expect(message).toContain('PostgresStore.schema()');
  });

  test('clearExpiredByTimeout needs nothing: the store deletes expired rows itself', () => {
    expect(limiterError({ clearExpiredByTimeout: true }).message).toContain(
      'clearExpiredByTimeout: unknown option; nothing needed: PostgresStore deletes expired rows itself',
    );
  });

  test('storeType needs nothing: the store passed says which', () => {
    const { message } = limiterError({ storeType: 'knex' });
    expect(message).toContain('storeType: unknown option; nothing: the store you pass says which');
    expect(message).toContain('new PostgresStore({ client })');
  });
});

describe("rate-limit-redis's constructor options given to Sluice's RedisStore", () => {
  test('sendCommand and prefix: every one named, each with what to write', () => {
    const error = errorOf(
      () => new RedisStore({ sendCommand: () => Promise.resolve(1), prefix: 'rl:' } as never),
    );
    expect(error).toMatchObject({ code: ErrorCodes.UNKNOWN_OPTION, option: 'RedisStore.sendCommand' });
    expect(error.message).toContain(
      'RedisStore.sendCommand: unknown option; pass the Redis client itself as client: new RedisStore({ client })',
    );
    // docs/migrating.md: the hint carries the prefix over, their value included.
    expect(error.message).toContain(
      "RedisStore.prefix: unknown option; the key namespace is the limiter's prefix",
    );
    expect(error.message).toContain("prefix: 'rl'");
    expect(error.message).not.toContain("prefix: 'rl:'");
  });

  test('resetExpiryOnChange needs nothing', () => {
    const error = errorOf(() => new RedisStore({ resetExpiryOnChange: true } as never));
    expect(error.message).toContain('resetExpiryOnChange: unknown option; nothing needed');
  });
});
