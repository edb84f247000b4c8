import { createLimiter, ErrorCodes, type LimiterOptions, SluiceConfigError } from '@sluice/core';

// Found by test/fuzz/options.test.ts: `{ policies: [, ok] }` was accepted (Array#map skips holes) and the
// first consume threw a TypeError from inside the store.
describe('a sparse policies array', () => {
  it('is refused at construction, naming the missing policy', () => {
    const policies = new Array(2);
    policies[1] = { limit: 1, window: '1s' };
    let error: unknown;
    try {
      createLimiter({ policies } as LimiterOptions);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(SluiceConfigError);
    expect(error).toMatchObject({ code: ErrorCodes.INVALID_OPTION, option: 'policies[0]' });
  });
});
