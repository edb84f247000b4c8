import { sluice } from './plugin.js';

export { sluice };
export type { RouteRateLimitOptions, SluiceFastifyOptions, SluiceHook } from './types.js';
export default sluice;
