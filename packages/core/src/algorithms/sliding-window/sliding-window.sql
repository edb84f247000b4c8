-- SQL twin of sliding-window.ts: the same integer arithmetic, in the same order.
-- PostgresStore (stores/postgres/schema.ts) calls step and refund with:
--   state      the stored {windowIndex, current, previous}, or NULL
--   now        ms; cost: units of the call (0 observes); lim, w: the policy's limit and windowMs
-- step's retry_ms is -1 for a retry that never comes; `next` is the state to store when the whole call
-- is allowed (the state as it was, otherwise). refund is called only on a state (never NULL). Arrays are
-- 1-based. The signatures every twin shares are filled in where the braces stand (schema.ts).
CREATE OR REPLACE FUNCTION sluice_v2_sw_step{{step}} AS $$
DECLARE
  idx bigint := sluice_v2_idiv(now, w);
  finish bigint;
  curr bigint := 0;
  prev bigint := 0;
  scaled bigint;
  room bigint;
BEGIN
  IF state IS NOT NULL THEN
    IF state[1] = idx THEN
      curr := state[2];
      prev := state[3];
    ELSIF state[1] = idx - 1 THEN
      prev := state[2];
    END IF;
  END IF;
  finish := idx * w + w;
  reset_ms := finish - now;
  expires_at := finish + w;
  next := state;
  delay_ms := 0;
  -- The estimate times W: prev * (W - elapsed) + curr * W.
  scaled := prev * (finish - now) + curr * w;
  remaining := greatest(0, sluice_v2_idiv(lim * w - scaled, w));
  allowed := false;
  IF cost > lim THEN
    retry_ms := -1;
  ELSIF scaled + cost * w <= lim * w THEN
    allowed := true;
    next := ARRAY[idx, curr + cost, prev];
    remaining := greatest(0, sluice_v2_idiv(lim * w - scaled - cost * w, w));
    retry_ms := 0;
  ELSE
    room := (lim - curr - cost) * w;
    IF room >= 0 THEN
      -- Denied with room left means prev > 0: wait until enough of it has slid out of the window.
      retry_ms := finish - sluice_v2_idiv(room, prev) - now;
    ELSE
      -- curr + cost > lim: in the next window curr becomes the previous count and slides out in turn.
      retry_ms := finish + w - sluice_v2_idiv((lim - cost) * w, curr) - now;
    END IF;
  END IF;
END $$;

CREATE OR REPLACE FUNCTION sluice_v2_sw_refund{{refund}} AS $$
DECLARE
  idx bigint := sluice_v2_idiv(charged_at, w);
BEGIN
  next := state;
  expires_at := (state[1] + 2) * w;
  IF state[1] = idx THEN
    next := ARRAY[idx, greatest(0, state[2] - cost), state[3]];
  ELSIF state[1] = idx + 1 THEN
    next := ARRAY[state[1], state[2], greatest(0, state[3] - cost)];
  END IF;
END $$;

-- step for a set of calls (PostgresStore's set-based path, call.sql): the same arithmetic as one SQL
-- expression per field, which the planner inlines (a LANGUAGE sql function of one SELECT: no function
-- called per row). Floor division is written out (sluice_v2_idiv is STRICT, so never inlined); each
-- field computes only what step computes on its branch; OFFSET 0 keeps each part computed once.
CREATE OR REPLACE FUNCTION sluice_v2_sw_rows{{rows}} AS $$
  SELECT d.fits,
    CASE WHEN d.fits THEN ARRAY[c.idx, c.curr + cost, c.prev] ELSE state END,
    CASE WHEN d.fits THEN greatest(0, CASE WHEN (d.left_w - cost * w) % w < 0 THEN (d.left_w - cost * w) / w - 1
      ELSE (d.left_w - cost * w) / w END) ELSE d.idle END,
    c.finish - now,
    CASE
      WHEN cost > lim THEN -1
      WHEN d.fits THEN 0
      -- Denied with room left means prev > 0: wait until enough of it has slid out of the window.
      WHEN (lim - c.curr - cost) * w >= 0 THEN c.finish - now
        - CASE WHEN ((lim - c.curr - cost) * w) % c.prev < 0 THEN (lim - c.curr - cost) * w / c.prev - 1
          ELSE (lim - c.curr - cost) * w / c.prev END
      -- curr + cost > lim: in the next window curr becomes the previous count and slides out in turn.
      ELSE c.finish + w - now
        - CASE WHEN ((lim - cost) * w) % c.curr < 0 THEN (lim - cost) * w / c.curr - 1 ELSE (lim - cost) * w / c.curr END
    END,
    0::bigint,
    c.finish + w,
    d.idle, c.finish - now, 0::bigint
  FROM (
    SELECT i.idx, i.idx * w + w AS finish,
      CASE WHEN state[1] = i.idx THEN state[2] ELSE 0 END AS curr,
      CASE WHEN state[1] = i.idx THEN state[3] WHEN state[1] = i.idx - 1 THEN state[2] ELSE 0 END AS prev
    FROM (SELECT CASE WHEN now % w < 0 THEN now / w - 1 ELSE now / w END AS idx OFFSET 0) i
    OFFSET 0
  ) c, LATERAL (
    -- The estimate times W: prev * (W - elapsed) + curr * W; left_w is the limit less it.
    SELECT cost <= lim AND s.left_w - cost * w >= 0 AS fits, s.left_w,
      greatest(0, CASE WHEN s.left_w % w < 0 THEN s.left_w / w - 1 ELSE s.left_w / w END) AS idle
    FROM (SELECT lim * w - (c.prev * (c.finish - now) + c.curr * w) AS left_w OFFSET 0) s
    OFFSET 0
  ) d
$$;
