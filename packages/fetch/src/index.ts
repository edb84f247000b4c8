export { rateLimiter } from './limiter.js';
export type { Checked, FetchHandler, FetchRateLimiter, FetchSubject, RateLimiterOptions } from './types.js';
