import type { AlgorithmName, PolicyParams } from '../algorithms/index.js';

/**
 * Obviously-correct models of the seven algorithms, written straight from the contract (API.md) with
 * no compaction of state: the window algorithms keep every accepted call, the buckets keep the
 * textbook level, concurrency keeps its leases. They are slow on purpose and exist only to check the
 * real steps against. All arithmetic is on integers (levels scaled by windowMs, times by limit), so a
 * model is exact and a disagreement with a step is a real one.
 */
export interface ReferenceModel {
  /** The largest cost a call can ever be allowed. */
  readonly capacity: number;
  /** Would a call of `cost` at `now` be allowed? Changes nothing. */
  allows(now: number, cost: number): boolean;
  /** Records an allowed call; `leaseId` names a concurrency lease. */
  charge(now: number, cost: number, leaseId: number): void;
  /** `remaining` and `resetMs` of the state as it stands at `now`. */
  view(now: number): { remaining: number; resetMs: number };
  /** How long a call allowed at `now` waits for its slot (leaky-bucket); 0 for the others. */
  delayMs(now: number): number;
  /** Gives back a charge made at `chargedAt`, as far as the algorithm can (API.md `refund`). */
  refund(now: number, chargedAt: number, cost: number, leaseId: number): void;
}

/** One policy's answer to one call, as the reference sees it. */
export interface ReferenceStep {
  allowed: boolean;
  remaining: number;
  resetMs: number;
  retryAfterMs: number;
  delayMs: number;
}

interface Entry {
  t: number;
  cost: number;
}

function sum(entries: readonly Entry[], keep: (t: number) => boolean): number {
  let total = 0;
  for (const e of entries) if (keep(e.t)) total += e.cost;
  return total;
}

/** Takes back up to `cost` units from the entries that `match`, newest first. */
function takeBack(entries: Entry[], match: (t: number) => boolean, cost: number): void {
  for (let i = entries.length - 1; i >= 0 && cost > 0; i--) {
    const e = entries[i]!;
    if (!match(e.t)) continue;
    const taken = Math.min(e.cost, cost);
    e.cost -= taken;
    cost -= taken;
  }
}

/** Counts every accepted call in the epoch-aligned window of `now`. */
function fixedWindowModel({ limit, windowMs: w }: PolicyParams): ReferenceModel {
  const entries: Entry[] = [];
  const index = (t: number) => Math.floor(t / w);
  const used = (now: number) => sum(entries, (t) => index(t) === index(now));
  return {
    capacity: limit,
    allows: (now, cost) => used(now) + cost <= limit,
    charge: (now, cost) => void entries.push({ t: now, cost }),
    view: (now) => ({ remaining: limit - used(now), resetMs: (index(now) + 1) * w - now }),
    delayMs: () => 0,
    refund: (_now, chargedAt, cost) => takeBack(entries, (t) => index(t) === index(chargedAt), cost),
  };
}

/** API.md: estimate = prev * (window - elapsed) / window + curr, kept multiplied by the window. */
function slidingWindowModel({ limit, windowMs: w }: PolicyParams): ReferenceModel {
  const entries: Entry[] = [];
  const index = (t: number) => Math.floor(t / w);
  const scaledEstimate = (now: number) => {
    const k = index(now);
    const curr = sum(entries, (t) => index(t) === k);
    const prev = sum(entries, (t) => index(t) === k - 1);
    const elapsed = now - k * w;
    return prev * (w - elapsed) + curr * w;
  };
  return {
    capacity: limit,
    allows: (now, cost) => scaledEstimate(now) + cost * w <= limit * w,
    charge: (now, cost) => void entries.push({ t: now, cost }),
    view: (now) => ({
      remaining: Math.max(0, Math.floor((limit * w - scaledEstimate(now)) / w)),
      resetMs: (index(now) + 1) * w - now,
    }),
    delayMs: () => 0,
    refund: (_now, chargedAt, cost) => takeBack(entries, (t) => index(t) === index(chargedAt), cost),
  };
}

/** Exact log: the calls recorded in (now - window, now]. */
function slidingLogModel({ limit, windowMs: w }: PolicyParams): ReferenceModel {
  const entries: Entry[] = [];
  const inWindow = (now: number) => (t: number) => t > now - w && t <= now;
  return {
    capacity: limit,
    allows: (now, cost) => sum(entries, inWindow(now)) + cost <= limit,
    charge: (now, cost) => void entries.push({ t: now, cost }),
    view: (now) => {
      const live = entries.filter((e) => e.cost > 0 && inWindow(now)(e.t));
      const newest = live.length === 0 ? undefined : Math.max(...live.map((e) => e.t));
      return {
        remaining: limit - sum(live, () => true),
        resetMs: newest === undefined ? 0 : newest + w - now,
      };
    },
    delayMs: () => 0,
    refund: (_now, chargedAt, cost) => takeBack(entries, (t) => t === chargedAt, cost),
  };
}

/** The classic bucket: tokens and the time they were counted; `tokensW` is tokens * windowMs. */
function tokenBucketModel({ limit, windowMs: w, burst }: PolicyParams): ReferenceModel {
  let tokensW = burst * w;
  let last = Number.NEGATIVE_INFINITY;
  const tokensAt = (now: number) =>
    last === Number.NEGATIVE_INFINITY ? burst * w : Math.min(burst * w, tokensW + (now - last) * limit);
  return {
    capacity: burst,
    allows: (now, cost) => tokensAt(now) >= cost * w,
    charge: (now, cost) => {
      tokensW = tokensAt(now) - cost * w;
      last = now;
    },
    view: (now) => {
      const tokens = tokensAt(now);
      return { remaining: Math.floor(tokens / w), resetMs: Math.ceil((burst * w - tokens) / limit) };
    },
    delayMs: () => 0,
    refund: (now, chargedAt, cost) => {
      tokensW = Math.min(burst * w, tokensAt(now) + stillHeldW(now, chargedAt, cost, limit, w));
      last = now;
    },
  };
}

/** The leaky bucket as a meter (nginx limit_req): a level draining one request per T. `levelW` is level * windowMs. */
function leakyBucketModel({ limit, windowMs: w, burst }: PolicyParams): ReferenceModel {
  let levelW = 0;
  let last = 0;
  const levelAt = (now: number) => Math.max(0, levelW - (now - last) * limit);
  return {
    capacity: burst,
    allows: (now, cost) => levelAt(now) + cost * w <= burst * w,
    charge: (now, cost) => {
      levelW = levelAt(now) + cost * w;
      last = now;
    },
    view: (now) => {
      const level = levelAt(now);
      return { remaining: Math.floor((burst * w - level) / w), resetMs: Math.ceil(level / limit) };
    },
    // The water ahead of this request drains first: from empty the k-th waits (k - 1) * T.
    delayMs: (now) => Math.ceil(levelAt(now) / limit),
    refund: (now, chargedAt, cost) => {
      levelW = Math.max(0, levelAt(now) - stillHeldW(now, chargedAt, cost, limit, w));
      last = now;
    },
  };
}

/**
 * What a bucket may still hold of a charge of `cost` made at `chargedAt`, times the window: the charge
 * less what the refill has delivered since (API.md: a refund never gives back more than is charged).
 */
function stillHeldW(now: number, chargedAt: number, cost: number, limit: number, w: number): number {
  return Math.max(0, cost * w - (now - chargedAt) * limit);
}

/** Textbook GCRA (virtual scheduling); `tatL` is the theoretical arrival time times limit. */
function gcraModel({ limit, windowMs: w, burst }: PolicyParams): ReferenceModel {
  let tatL = Number.NEGATIVE_INFINITY;
  const ahead = (now: number) => Math.max(0, tatL - now * limit);
  return {
    capacity: burst,
    allows: (now, cost) => ahead(now) + cost * w <= burst * w,
    charge: (now, cost) => {
      tatL = Math.max(tatL, now * limit) + cost * w;
    },
    view: (now) => ({
      remaining: Math.floor((burst * w - ahead(now)) / w),
      resetMs: Math.ceil(ahead(now) / limit),
    }),
    delayMs: (now) => Math.ceil(ahead(now) / limit),
    refund: (now, chargedAt, cost) => {
      tatL -= stillHeldW(now, chargedAt, cost, limit, w);
    },
  };
}

/** Leases held until released or until `windowMs` after they were taken. */
function concurrencyModel({ limit, windowMs: w }: PolicyParams): ReferenceModel {
  let leases: Array<{ until: number; cost: number; id: number }> = [];
  const held = (now: number) => leases.reduce((n, l) => (l.until > now ? n + l.cost : n), 0);
  return {
    capacity: limit,
    allows: (now, cost) => held(now) + cost <= limit,
    charge: (now, cost, id) => void leases.push({ until: now + w, cost, id }),
    view: (now) => ({ remaining: limit - held(now), resetMs: 0 }),
    delayMs: () => 0,
    refund: (_now, _chargedAt, _cost, id) => {
      leases = leases.filter((l) => l.id !== id);
    },
  };
}

const MODELS: Record<AlgorithmName, (p: PolicyParams) => ReferenceModel> = {
  'fixed-window': fixedWindowModel,
  'sliding-window': slidingWindowModel,
  'sliding-log': slidingLogModel,
  'token-bucket': tokenBucketModel,
  'leaky-bucket': leakyBucketModel,
  gcra: gcraModel,
  concurrency: concurrencyModel,
};

/** A fresh reference model of `algorithm` (a subject never seen). */
export function referenceModel(algorithm: AlgorithmName, params: PolicyParams): ReferenceModel {
  return MODELS[algorithm](params);
}

/** Longest a brute-force retry search may look ahead before the model is declared broken. */
const MAX_SEARCH_MS = 10_000_000;

/**
 * The earliest wait after which the same call is allowed with no other traffic, found by trying every
 * millisecond: what "honest and tight retryAfterMs" means, with nothing clever to get wrong.
 */
export function referenceRetryAfterMs(model: ReferenceModel, now: number, cost: number): number {
  if (cost > model.capacity) return Number.POSITIVE_INFINITY;
  for (let wait = 0; wait <= MAX_SEARCH_MS; wait++) if (model.allows(now + wait, cost)) return wait;
  throw new Error(`reference model never allows cost ${cost} after ${now}`);
}

/**
 * One policy's answer to a call. With `charge` false (a peek, or another policy denied) nothing is
 * recorded and an allowing policy reports its state as it stands.
 */
export function referenceStep(
  model: ReferenceModel,
  now: number,
  cost: number,
  charge: boolean,
  leaseId = 0,
): ReferenceStep {
  const allowed = cost <= model.capacity && model.allows(now, cost);
  if (!allowed) {
    return { allowed, ...model.view(now), retryAfterMs: referenceRetryAfterMs(model, now, cost), delayMs: 0 };
  }
  const delayMs = model.delayMs(now);
  if (charge) model.charge(now, cost, leaseId);
  return { allowed, ...model.view(now), retryAfterMs: 0, delayMs };
}
