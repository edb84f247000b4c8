import { ErrorCodes } from '../errors.js';
import { PLANS_HERE } from '../foreign-options.js';
import { fail } from '../options.js';

/**
 * express-rate-limit's and @fastify/rate-limit's `limit` may be a function of the request. Checked
 * before the HTTP layer builds its limiter: createLimiter's own error says plans are "not of
 * createLimiter", which a user of an adapter never called (review 28); here, plans go beside the
 * options given. Named as createLimiter names them (`options.limit`, `policies[0].limit`).
 */
export function rejectLimitPerRequest(options: Record<string, unknown>): void {
  const given: Array<[string, unknown]> = [['options.limit', options.limit]];
  if (Array.isArray(options.policies)) {
    options.policies.forEach((p: unknown, i) => {
      if (typeof p === 'object' && p !== null)
        given.push([`policies[${i}].limit`, (p as { limit?: unknown }).limit]);
    });
  }
  for (const [option, limit] of given) {
    if (typeof limit === 'function')
      fail(ErrorCodes.INVALID_LIMIT, option, `expected a positive integer; got a function: ${PLANS_HERE}`);
  }
}
