-- SQL twin of fixed-window.ts: the same integer arithmetic, in the same order.
-- PostgresStore (stores/postgres/schema.ts) calls step and refund with:
--   state      the stored {windowIndex, count}, or NULL
--   now        ms; cost: units of the call (0 observes); lim, w: the policy's limit and windowMs
-- step's retry_ms is -1 for a retry that never comes; `next` is the state to store when the whole call
-- is allowed (the state as it was, otherwise). refund is called only on a state (never NULL). Arrays are
-- 1-based. The signatures every twin shares are filled in where the braces stand (schema.ts).
CREATE OR REPLACE FUNCTION sluice_v2_fw_step{{step}} AS $$
DECLARE
  idx bigint := sluice_v2_idiv(now, w);
  count bigint := 0;
BEGIN
  IF state IS NOT NULL AND state[1] = idx THEN count := state[2]; END IF;
  expires_at := (idx + 1) * w;
  reset_ms := expires_at - now;
  next := state;
  delay_ms := 0;
  remaining := lim - count;
  allowed := false;
  IF cost > lim THEN
    retry_ms := -1;
  ELSIF count + cost > lim THEN
    -- The next window starts empty, and cost <= lim fits there.
    retry_ms := reset_ms;
  ELSE
    allowed := true;
    next := ARRAY[idx, count + cost];
    remaining := lim - count - cost;
    retry_ms := 0;
  END IF;
END $$;

CREATE OR REPLACE FUNCTION sluice_v2_fw_refund{{refund}} AS $$
DECLARE
  idx bigint := sluice_v2_idiv(charged_at, w);
BEGIN
  IF state[1] <> idx THEN
    next := state;
    expires_at := state[1] * w + w;
  ELSE
    next := ARRAY[idx, greatest(0, state[2] - cost)];
    expires_at := (idx + 1) * w;
  END IF;
END $$;
