import { sluice } from './plugin.js';

export type { RouteRateLimitOptions, SluiceFastifyOptions, SluiceHook } from './types.js';
export { sluice };
export default sluice;
