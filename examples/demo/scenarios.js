/**
 * What the demo runs: one route per algorithm on both servers, and the traffic sent to it.
 * Short windows keep the whole demo within a few seconds.
 *
 * - `burst`: requests sent one after another; `concurrent`: sent all at once.
 * - `retry`: after the burst, wait the first Retry-After, then send one more (it is allowed:
 *   Retry-After is honest).
 * - `aligned`: start just after a whole second, so the burst does not straddle a window boundary.
 * - `holdMs`: how long the route takes to answer (for concurrency).
 */
export const SCENARIOS = [
  {
    algorithm: 'fixed-window',
    policy: { limit: 5, window: '1s', algorithm: 'fixed-window' },
    note: 'a counter per whole second; all quota returns when the second ends',
    burst: 7,
    aligned: true,
    retry: true,
  },
  {
    algorithm: 'sliding-window',
    policy: { limit: 5, window: '1s' },
    note: 'the default: this second plus the last one weighted by overlap; the burst slides out gradually',
    burst: 7,
    aligned: true,
    retry: true,
  },
  {
    algorithm: 'sliding-log',
    policy: { limit: 5, window: '1s', algorithm: 'sliding-log' },
    note: 'exact: never more than 5 in any 1 s',
    burst: 7,
    retry: true,
  },
  {
    algorithm: 'token-bucket',
    policy: { limit: 5, window: '1s', algorithm: 'token-bucket', burst: 5 },
    note: 'bursts of 5, then one token back every 200 ms',
    burst: 7,
    retry: true,
  },
  {
    algorithm: 'gcra',
    policy: { limit: 5, window: '1s', algorithm: 'gcra', burst: 5 },
    note: 'the same decisions as the token bucket',
    burst: 7,
    retry: true,
  },
  {
    algorithm: 'leaky-bucket',
    policy: { limit: 5, window: '1s', algorithm: 'leaky-bucket', burst: 5 },
    note: '7 sent at once: 5 let through 200 ms apart, 2 refused',
    concurrent: 7,
  },
  {
    algorithm: 'concurrency',
    policy: { limit: 2, window: '10s', algorithm: 'concurrency' },
    note: '2 in flight at most. 4 sent at once to a route that takes 300 ms: 2 run, 2 are refused (Retry-After is the lease expiry, the bound if nothing finished); a slot frees when a response ends',
    concurrent: 4,
    holdMs: 300,
    after: 1,
  },
];
