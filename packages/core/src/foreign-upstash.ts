/**
 * @upstash/ratelimit 2's `limiter` option: an algorithm made by Ratelimit.slidingWindow(10, '10 s'),
 * fixedWindow or tokenBucket, which carries the algorithm, the limit and the window at once. It is a
 * closure (its numbers cannot be read back), so the hint gives the translation of each maker; a
 * function named after its algorithm (a wrapper of the user's own) narrows it to that one.
 */
const MAKERS: readonly (readonly [string, string])[] = [
  [
    'sliding',
    "Ratelimit.slidingWindow(10, '10 s') is algorithm: 'sliding-window', limit: 10, window: '10 s'",
  ],
  ['fixed', "Ratelimit.fixedWindow(10, '10 s') is algorithm: 'fixed-window', limit: 10, window: '10 s'"],
  [
    'token',
    "Ratelimit.tokenBucket(5, '10 s', 20) is algorithm: 'token-bucket', limit: 5 (its refill rate), window: '10 s' (its interval), burst: 20 (its maxTokens)",
  ],
];

const WRITE = 'write `algorithm`, `limit` and `window` instead (the shorthand, or one policy in policies)';

/** The hint for an @upstash/ratelimit algorithm given as `value`. */
export function upstashLimiterNote(value?: unknown): string {
  const name = typeof value === 'function' ? value.name.toLowerCase() : '';
  const named = MAKERS.filter(([word]) => name.includes(word));
  const makers = named.length === 1 ? named : MAKERS;
  return `${WRITE}: @upstash/ratelimit's ${makers.map(([, text]) => text).join('; ')}`;
}

/** Whether `value` may be an @upstash/ratelimit algorithm: a function (Sluice's limiter is an object). */
export const isUpstashAlgorithm = (value: unknown): boolean => typeof value === 'function';
