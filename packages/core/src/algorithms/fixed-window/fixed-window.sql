-- SQL twin of fixed-window.ts: the same integer arithmetic, in the same order.
-- PostgresStore (stores/postgres/schema.ts) calls step and refund with:
--   state      the stored {windowIndex, count}, or NULL
--   now        ms; cost: units of the call (0 observes); lim, w: the policy's limit and windowMs
-- step's retry_ms is -1 for a retry that never comes; `next` is the state to store when the whole call
-- is allowed (the state as it was, otherwise). Arrays are 1-based.
CREATE OR REPLACE FUNCTION sluice_v1_fw_step(
  state bigint[], now bigint, cost bigint, lim bigint, w bigint, burst bigint, lease bigint,
  OUT allowed boolean, OUT next bigint[], OUT remaining bigint, OUT reset_ms bigint,
  OUT retry_ms bigint, OUT delay_ms bigint, OUT expires_at bigint)
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
DECLARE
  idx bigint := sluice_v1_idiv(now, w);
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

CREATE OR REPLACE FUNCTION sluice_v1_fw_refund(
  state bigint[], now bigint, cost bigint, charged_at bigint, lease bigint, lim bigint, w bigint,
  burst bigint, OUT next bigint[], OUT expires_at bigint)
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
DECLARE
  idx bigint := sluice_v1_idiv(charged_at, w);
BEGIN
  IF state IS NULL OR state[1] <> idx THEN
    next := state;
    expires_at := coalesce(state[1], 0) * w + w;
  ELSE
    next := ARRAY[idx, greatest(0, state[2] - cost)];
    expires_at := (idx + 1) * w;
  END IF;
END $$;
