import { sluice } from './plugin.js';

export type { RateLimitHook, RouteRateLimitOptions, SluiceFastifyOptions, SluiceHook } from './types.js';
export { sluice };
export default sluice;
