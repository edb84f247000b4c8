export type { RateLimiterOptions, RateLimitMiddleware } from './middleware.js';
export { rateLimiter } from './middleware.js';
