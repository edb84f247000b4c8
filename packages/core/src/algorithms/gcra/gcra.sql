-- SQL twin of gcra.ts (and so of token-bucket and leaky-bucket): the same integer arithmetic, in the
-- same order. PostgresStore (stores/postgres/schema.ts) calls step and refund with:
--   state      the stored {anchorMs, units}: the theoretical arrival time anchorMs + units / limit
--   now        ms; cost: units of the call (0 observes); lim, w, burst: limit, windowMs and capacity
-- step's retry_ms is -1 for a retry that never comes; `next` is the state to store when the whole call
-- is allowed (the state as it was, otherwise). refund is called only on a state (never NULL). Arrays are
-- 1-based. The signatures every twin shares are filled in where the braces stand (schema.ts).
CREATE OR REPLACE FUNCTION sluice_v2_gc_step{{step}} AS $$
DECLARE
  ahead bigint := 0;
  capacity bigint := burst * w;
  wait_ms bigint;
  after bigint;
  anchor bigint;
BEGIN
  -- (max(tat, now) - now) * limit: how far the schedule runs ahead of now.
  IF state IS NOT NULL THEN ahead := greatest(0, (state[1] - now) * lim + state[2]); END IF;
  wait_ms := sluice_v2_ceil_div(ahead, lim);
  next := state;
  allowed := false;
  remaining := greatest(0, sluice_v2_idiv(capacity - ahead, w));
  reset_ms := wait_ms;
  delay_ms := 0;
  expires_at := now + wait_ms;
  IF cost > burst THEN
    retry_ms := -1;
    RETURN;
  END IF;
  after := ahead + cost * w;
  IF after <= capacity THEN
    anchor := sluice_v2_idiv(after, lim);
    allowed := true;
    next := ARRAY[now + anchor, after - anchor * lim];
    remaining := sluice_v2_idiv(capacity - after, w);
    reset_ms := sluice_v2_ceil_div(after, lim);
    retry_ms := 0;
    delay_ms := wait_ms;
    expires_at := now + reset_ms;
  ELSE
    retry_ms := sluice_v2_ceil_div(after - capacity, lim);
  END IF;
END $$;

CREATE OR REPLACE FUNCTION sluice_v2_gc_refund{{refund}} AS $$
DECLARE
  units bigint;
  shift bigint;
  anchor bigint;
  rest bigint;
BEGIN
  -- Move the schedule back by what may still be held of the charge: cost * T less the time since it
  -- was made (that much may have refilled already). A schedule behind now is simply a full bucket.
  units := state[2] - greatest(0, cost * w - greatest(0, now - charged_at) * lim);
  shift := sluice_v2_idiv(units, lim);
  anchor := state[1] + shift;
  rest := units - shift * lim;
  next := ARRAY[anchor, rest];
  expires_at := anchor + CASE WHEN rest > 0 THEN 1 ELSE 0 END;
END $$;
