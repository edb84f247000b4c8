export type { RateLimiterOptions, RateLimitMiddleware, RateLimitVariables } from './middleware.js';
export { rateLimiter } from './middleware.js';
