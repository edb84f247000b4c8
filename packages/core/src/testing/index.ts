export type { ManualClock } from './manual-clock.js';
export { manualClock } from './manual-clock.js';
