export type { RateLimiterOptions, RateLimitMiddleware } from './middleware.js';
export { privateProxyIp, rateLimiter } from './middleware.js';
