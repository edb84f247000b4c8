import { createHttpHandler, ErrorCodes, frameworkReader } from '@sluice/core';
import { rateLimiter } from '@sluice/express';
import { configErrorOf as errorOf } from '../support/config-error.js';

// express-rate-limit's handler(req, res, next, options), pasted unchanged, passed validation and then
// threw on every refusal (newcomer review, issue #28). Failed before the fix: no error at start.

// biome-ignore lint/suspicious/noExplicitAny: express-rate-limit's own parameter types, as pasted
const foreign = (_req: any, res: any, _next: any, options: any) => res.status(options.statusCode).send('no');

describe("express-rate-limit's four-parameter handler", () => {
  test('is refused at start, saying what Sluice calls handler with', () => {
    const error = errorOf(() => rateLimiter({ limit: 1, window: '1m', handler: foreign } as never));
    expect(error).toMatchObject({ code: ErrorCodes.INVALID_OPTION, option: 'handler' });
    expect(error!.message).toContain("express-rate-limit's (req, res, next, options)");
    expect(error!.message).toContain('handler: (req, res, decision) =>');
  });

  test('is refused by createHttpHandler too (every adapter parses the options there)', () => {
    const error = errorOf(() =>
      createHttpHandler({ limit: 1, window: '1m', handler: foreign } as never, frameworkReader),
    );
    expect(error?.option).toBe('handler');
  });

  test("Sluice's own handler shapes are taken", () => {
    for (const handler of [
      () => {},
      (_req: unknown) => {},
      (_req: unknown, _res: unknown, _d: unknown) => {},
    ])
      expect(errorOf(() => rateLimiter({ limit: 1, window: '1m', handler }))).toBeUndefined();
  });
});
