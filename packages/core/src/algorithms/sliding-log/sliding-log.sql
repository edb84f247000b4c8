-- SQL twin of sliding-log.ts: the same integer arithmetic, in the same order.
-- PostgresStore (stores/postgres/schema.ts) calls step and refund with:
--   state      the stored {t1, c1, t2, c2, ...} (entries in time order, one per ms), or NULL
--   now        ms; cost: units of the call (0 observes); lim, w: the policy's limit and windowMs
-- step's retry_ms is -1 for a retry that never comes; `next` is the state to store when the whole call
-- is allowed (the state as it was, otherwise). refund is called only on a state (never NULL). Arrays are
-- 1-based. The signatures every twin shares are filled in where the braces stand (schema.ts).
CREATE OR REPLACE FUNCTION sluice_v2_sl_step{{step}} AS $$
DECLARE
  length int := coalesce(array_length(state, 1), 0);
  from_i int := 1;
  used bigint := 0;
  freed bigint := 0;
  newest bigint;
  i int;
BEGIN
  -- Entries at or before now - w have left the window.
  WHILE from_i <= length AND state[from_i] <= now - w LOOP from_i := from_i + 2; END LOOP;
  i := from_i;
  WHILE i <= length LOOP
    used := used + state[i + 1];
    i := i + 2;
  END LOOP;
  IF length >= from_i THEN newest := state[length - 1]; END IF;
  reset_ms := coalesce(newest + w - now, 0);
  expires_at := coalesce(newest + w, now);
  next := state;
  delay_ms := 0;
  remaining := lim - used;
  allowed := false;
  IF cost > lim THEN
    retry_ms := -1;
  ELSIF used + cost <= lim THEN
    allowed := true;
    retry_ms := 0;
    -- cost 0 observes without recording (the uncharged view of a call that was not committed).
    IF cost = 0 THEN RETURN; END IF;
    next := coalesce(state[from_i:length], '{}');
    IF newest = now THEN
      next[array_length(next, 1)] := next[array_length(next, 1)] + cost;
    ELSE
      next := next || ARRAY[now, cost];
    END IF;
    remaining := lim - used - cost;
    reset_ms := w;
    expires_at := now + w;
  ELSE
    -- Wait until the oldest entries have left the window and freed enough.
    i := from_i;
    WHILE used - freed + cost > lim LOOP
      freed := freed + state[i + 1];
      i := i + 2;
    END LOOP;
    retry_ms := state[i - 2] + w - now;
  END IF;
END $$;

CREATE OR REPLACE FUNCTION sluice_v2_sl_refund{{refund}} AS $$
DECLARE
  length int;
  i int := 1;
BEGIN
  next := state;
  length := coalesce(array_length(next, 1), 0);
  WHILE i <= length LOOP
    IF next[i] = charged_at THEN
      next[i + 1] := next[i + 1] - cost;
      IF next[i + 1] <= 0 THEN next := next[1:i - 1] || next[i + 2:length]; END IF;
      EXIT;
    END IF;
    i := i + 2;
  END LOOP;
  length := coalesce(array_length(next, 1), 0);
  expires_at := CASE WHEN length > 0 THEN next[length - 1] + w ELSE now END;
END $$;
