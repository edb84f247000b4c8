export { RateLimit, SkipRateLimit, type SluiceOptions } from './decorators.js';
export { RateLimitException, SluiceGuard } from './guard.js';
export { type SluiceAsyncOptions, SluiceModule } from './module.js';
