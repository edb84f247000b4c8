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

-- step for a set of calls (PostgresStore's set-based path, call.sql): the same arithmetic as one SQL
-- expression per field, which the planner inlines (a LANGUAGE sql function of one SELECT: no function
-- called per row). Floor and ceiling division are written out (the helpers are STRICT, so never
-- inlined); each field computes only what step computes on its branch; OFFSET 0 keeps each part
-- computed once.
CREATE OR REPLACE FUNCTION sluice_v2_gc_rows{{rows}} AS $$
  SELECT d.fits,
    CASE WHEN d.fits THEN ARRAY[now + d.anchor, d.after - d.anchor * lim] ELSE state END,
    CASE WHEN d.fits THEN CASE WHEN (a.capacity - d.after) % w < 0 THEN (a.capacity - d.after) / w - 1
        ELSE (a.capacity - d.after) / w END
      ELSE greatest(0, a.idle) END,
    CASE WHEN d.fits THEN d.reset_ms ELSE a.wait_ms END,
    CASE
      WHEN cost > burst THEN -1
      WHEN d.fits THEN 0
      ELSE CASE WHEN (d.after - a.capacity) % lim > 0 THEN (d.after - a.capacity) / lim + 1
        ELSE (d.after - a.capacity) / lim END
    END,
    CASE WHEN d.fits THEN a.wait_ms ELSE 0 END,
    now + CASE WHEN d.fits THEN d.reset_ms ELSE a.wait_ms END,
    a.idle, a.wait_ms, a.wait_ms
  FROM (
    SELECT h.ahead, h.capacity, CASE WHEN h.ahead % lim > 0 THEN h.ahead / lim + 1 ELSE h.ahead / lim END AS wait_ms,
      CASE WHEN (h.capacity - h.ahead) % w < 0 THEN (h.capacity - h.ahead) / w - 1 ELSE (h.capacity - h.ahead) / w END AS idle
    FROM (
      -- (max(tat, now) - now) * limit: how far the schedule runs ahead of now.
      SELECT CASE WHEN state IS NULL THEN 0 ELSE greatest(0, (state[1] - now) * lim + state[2]) END AS ahead,
        burst * w AS capacity
      OFFSET 0
    ) h
    OFFSET 0
  ) a, LATERAL (
    SELECT f.fits, f.after,
      CASE WHEN f.fits THEN CASE WHEN f.after % lim < 0 THEN f.after / lim - 1 ELSE f.after / lim END END AS anchor,
      CASE WHEN f.fits THEN CASE WHEN f.after % lim > 0 THEN f.after / lim + 1 ELSE f.after / lim END END AS reset_ms
    FROM (
      SELECT cost <= burst AND a.ahead + cost * w <= a.capacity AS fits,
        CASE WHEN cost <= burst THEN a.ahead + cost * w END AS after
      OFFSET 0
    ) f
    OFFSET 0
  ) d
$$;
