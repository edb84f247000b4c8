import type Redis from 'ioredis';
import fc from '../../../../test/support/fast-check.js';
import { describeRedis, sharedRedis } from '../../../../test/support/redis.js';
import fixedWindow from '../../src/algorithms/fixed-window/fixed-window.lua';
import slidingWindow from '../../src/algorithms/sliding-window/sliding-window.lua';
import { closeClients, standaloneClient } from './clients.js';

/**
 * The window twins' stepInteger is the Redis script's path for a batch of plain consumes under Redis
 * TIME: the step taken on the integer a key holds. It must answer as step on fromInteger's state does,
 * and give toInteger of step's next state (nil where step refuses or the count does not fit), and
 * expiresAtOf of the state read. Compared in Redis's own Lua, on drawn integers of every window a key
 * can hold (the current one and the three before it), clocks at and beside window edges, costs up to
 * past the limit, and counts up to where the integer is full.
 */
const TWINS = {
  'fixed-window': { source: fixedWindow, countBits: 48, counts: 1 },
  'sliding-window': { source: slidingWindow, countBits: 24, counts: 2 },
} as const;

/** Runs step and stepInteger on each case of ARGV (packed or '', now, cost, limit, w); returns the mismatches. */
const differential = (source: string) => `
local function chunk()
${source}
end
local step, _, expiresAtOf, toInteger, fromInteger, _, _, _, stepInteger = chunk()
local function text(x)
  if x == nil then return 'nil' end
  if x == true then return 'true' end
  if x == false then return 'false' end
  if x == math.huge then return 'inf' end
  return string.format('%.17g', x)
end
local function line(...)
  local out = {}
  for i = 1, select('#', ...) do out[i] = text((select(i, ...))) end
  return table.concat(out, ' ')
end
local mismatches = {}
for c = 1, #ARGV, 5 do
  local packed = nil
  if ARGV[c] ~= '' then packed = ARGV[c] + 0 end
  local now, cost, limit, w = ARGV[c + 1] + 0, ARGV[c + 2] + 0, ARGV[c + 3] + 0, ARGV[c + 4] + 0
  local state = nil
  if packed ~= nil then state = fromInteger(packed, now, w) end
  local ok, nextState, remaining, resetMs, retryAfterMs, delayMs, expiresAt = step(state, now, cost, limit, w)
  local value = nil
  if ok then value = toInteger(nextState) end
  local kept = -1
  if state ~= nil then kept = expiresAtOf(state, w) end
  local want = line(ok, value, remaining, resetMs, retryAfterMs, delayMs, expiresAt, kept)
  local got = line(stepInteger(packed, now, cost, limit, w))
  if got ~= want then
    mismatches[#mismatches + 1] = table.concat({ ARGV[c], ARGV[c + 1], ARGV[c + 2], ARGV[c + 3], ARGV[c + 4] }, ' ')
      .. ': step ' .. want .. ', stepInteger ' .. got
  end
end
return mismatches`;

/** One case: the key's integer (undefined: no key), now, cost, limit and window, as ARGV strings. */
function anyCase(countBits: number, counts: number) {
  const full = 2 ** countBits - 1;
  const count = (limit: number) =>
    fc.oneof(
      fc.integer({ min: 0, max: limit + 2 }),
      fc.constantFrom(0, 1, full - 1, full),
      fc.integer({ min: 0, max: full }),
    );
  return fc
    .record({
      w: fc.oneof(fc.constantFrom(1, 2, 40, 1000, 60_000, 3_600_000), fc.integer({ min: 1, max: 10 ** 7 })),
      index: fc.integer({ min: 1_000, max: 10 ** 6 }),
      // Where in its window the call falls: the first and last ms included.
      at: fc.oneof(fc.constantFrom(0, 1, -1, -2), fc.double({ min: 0, max: 1, noNaN: true })),
      // The window the key's state is from: the current one, or as far back as a key may still be read.
      back: fc.option(fc.integer({ min: 0, max: 3 }), { freq: 5 }),
      limit: fc.oneof(fc.integer({ min: 1, max: 1000 }), fc.constantFrom(full - 1, full, full + 1)),
      drawn: fc.tuple(fc.nat(), fc.nat()),
      cost: fc.oneof(fc.constant(1), fc.integer({ min: 1, max: 50 })),
    })
    .chain((c) =>
      fc.tuple(fc.constant(c), fc.array(count(c.limit), { minLength: counts, maxLength: counts })),
    )
    .map(([{ w, index, at, back, limit, cost }, drawnCounts]) => {
      const offset = at >= 1 || at <= -1 ? (at < 0 ? w + at : at) : Math.floor(at * w);
      const now = index * w + Math.min(w - 1, Math.max(0, offset));
      const stored = index - (back ?? 0);
      // fixed: count * 4 + index % 4; sliding: (previous * 2^24 + current) * 4 + index % 4.
      const counted = drawnCounts.reduceRight((sum, n) => sum * 2 ** countBits + n, 0);
      const packed = back === null ? '' : String(counted * 4 + (stored % 4));
      return [packed, String(now), String(Math.min(cost, limit + 1)), String(limit), String(w)];
    })
    .filter(([packed]) => packed === '' || Number.isSafeInteger(Number(packed)));
}

describeRedis("the window twins' stepInteger decides as step on fromInteger's state", () => {
  let client: Redis;

  beforeAll(async () => {
    client = standaloneClient(await sharedRedis());
  });

  afterAll(closeClients);

  test.each(Object.keys(TWINS) as Array<keyof typeof TWINS>)('%s', async (name) => {
    const { source, countBits, counts } = TWINS[name];
    const script = differential(source);
    // Cases in batches of 500, one EVAL each.
    await fc.assert(
      fc.asyncProperty(
        fc.array(anyCase(countBits, counts), { minLength: 500, maxLength: 500 }),
        async (cases) => {
          const mismatches = (await client.eval(script, 0, ...cases.flat())) as string[];
          expect(mismatches).toEqual([]);
        },
      ),
      // The mismatches name their cases: no shrinking of 500 at a time.
      { numRuns: 40, endOnFailure: true },
    );
  });
});
