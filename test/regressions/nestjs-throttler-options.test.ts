import 'reflect-metadata';
import { createLimiter, ErrorCodes } from '@sluice/core';
import { RateLimit, SluiceModule } from '@sluice/nestjs';
import { configError as errorOf } from '../support/config-error.js';

// @nestjs/throttler 6 options pasted unchanged got no migration hint (newcomer review, #28):
// ThrottlerModule.forRoot([{ ttl, limit }]) said "expected an object; got an array of 1",
// @Throttle({ default: { limit, ttl } }) "default: unknown option" (and `short` a typo's `store`), and
// a throttler list pasted as policies named one ttl per run. Each test failed before the fix.

describe('SluiceModule.forRoot([...]) (the throttler list)', () => {
  test('one throttler: says to write the shorthand, its ttl as window', () => {
    const error = errorOf(() => SluiceModule.forRoot([{ ttl: 60000, limit: 10 }] as never));
    expect(error).toMatchObject({ code: ErrorCodes.INVALID_OPTION, option: 'options' });
    expect(error.message).toContain('write SluiceModule.forRoot({ limit: 10, window: 60000 })');
    expect(error.message).toContain('[0].ttl: 60000 ms is window: 60000');
  });

  test('several: named policies, every ttl reported', () => {
    const throttlers = [
      { name: 'short', ttl: 1000, limit: 3 },
      { name: 'long', ttl: 60000, limit: 100, blockDuration: 5000 },
    ];
    const error = errorOf(() => SluiceModule.forRoot(throttlers as never));
    expect(error.message).toContain(
      'write SluiceModule.forRoot({ policies: [{ name: "short", limit: 3, window: 1000 }, { name: "long", limit: 100, window: 60000 }] })',
    );
    expect(error.message).toContain('[0].ttl: 1000 ms');
    expect(error.message).toContain('[1].ttl: 60000 ms');
    expect(error.message).toContain('[1].blockDuration: not a policy option');
  });

  test('forRootAsync: the same error, from its factory', async () => {
    const module = SluiceModule.forRootAsync({ useFactory: () => [{ ttl: 60000, limit: 10 }] as never });
    const provider = module.providers![0] as { useFactory: () => Promise<unknown> };
    await expect(provider.useFactory()).rejects.toMatchObject({
      code: ErrorCodes.INVALID_OPTION,
      message: expect.stringContaining('write SluiceModule.forRoot({ limit: 10, window: 60000 })'),
    });
  });
});

describe('@RateLimit({ name: { limit, ttl } }) (@Throttle’s shape)', () => {
  test('default: says to write the options themselves', () => {
    const error = errorOf(() => RateLimit({ default: { limit: 3, ttl: 60000 } } as never));
    expect(error).toMatchObject({ code: ErrorCodes.UNKNOWN_OPTION, option: 'default' });
    expect(error.message).toContain('write @RateLimit({ limit: 3, window: 60000 })');
    expect(error.message).toContain('default.ttl: 60000 ms is window: 60000');
  });

  test('several names: named policies, every ttl reported, no typo hint', () => {
    const error = errorOf(() =>
      RateLimit({ short: { limit: 3, ttl: 1000 }, long: { limit: 100, ttl: 60000 } } as never),
    );
    expect(error.message).toContain(
      '@RateLimit({ policies: [{ name: "short", limit: 3, window: 1000 }, { name: "long", limit: 100, window: 60000 }] })',
    );
    expect(error.message).toContain('short.ttl: 1000 ms');
    expect(error.message).toContain('long.ttl: 60000 ms');
    expect(error.message).not.toContain('write `store`');
  });

  test("Sluice's own options are taken", () => {
    expect(() => RateLimit({ limit: 3, window: '1m', ban: { after: 2, for: '1m' } })).not.toThrow();
  });
});

test('a throttler list pasted as policies: every ttl in one error', () => {
  const error = errorOf(() =>
    createLimiter({
      policies: [
        { name: 'short', ttl: 1000, limit: 3 },
        { name: 'long', ttl: 60000, limit: 100 },
      ],
    } as never),
  );
  expect(error).toMatchObject({ code: ErrorCodes.UNKNOWN_OPTION, option: 'policies[0].ttl' });
  expect(error.message).toContain('policies[1].ttl: unknown option; write `window` instead');
});
