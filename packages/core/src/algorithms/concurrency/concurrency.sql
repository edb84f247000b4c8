-- SQL twin of concurrency.ts: the same integer arithmetic, in the same order.
-- PostgresStore (stores/postgres/schema.ts) calls step and refund with:
--   state      the stored {expiresAt1, cost1, leaseId1, ...} (leases in order of expiry), or NULL
--   now        ms; cost: units of the call (0 observes); lim, w: the policy's limit and windowMs
--   lease      the call's lease (step: the lease taken; refund: the lease released)
-- step's retry_ms is -1 for a retry that never comes; `next` is the state to store when the whole call
-- is allowed (the state as it was, otherwise). refund is called only on a state (never NULL). Arrays are
-- 1-based. The signatures every twin shares are filled in where the braces stand (schema.ts).
CREATE OR REPLACE FUNCTION sluice_v2_cc_step{{step}} AS $$
DECLARE
  length int := coalesce(array_length(state, 1), 0);
  from_i int := 1;
  held bigint := 0;
  freed bigint := 0;
  i int;
BEGIN
  WHILE from_i <= length AND state[from_i] <= now LOOP from_i := from_i + 3; END LOOP;
  i := from_i;
  WHILE i <= length LOOP
    held := held + state[i + 1];
    i := i + 3;
  END LOOP;
  expires_at := CASE WHEN length >= from_i THEN state[length - 2] ELSE now END;
  next := state;
  reset_ms := 0;
  delay_ms := 0;
  remaining := lim - held;
  allowed := false;
  IF cost > lim THEN
    retry_ms := -1;
  ELSIF held + cost <= lim THEN
    allowed := true;
    retry_ms := 0;
    -- cost 0 observes without taking a lease (the uncharged view of a call that was not committed).
    IF cost = 0 THEN RETURN; END IF;
    next := coalesce(state[from_i:length], '{}') || ARRAY[now + w, cost, lease];
    remaining := lim - held - cost;
    expires_at := now + w;
  ELSE
    -- With no other traffic, leases leave only by expiring: wait for the oldest to free enough.
    i := from_i;
    WHILE held - freed + cost > lim LOOP
      freed := freed + state[i + 1];
      i := i + 3;
    END LOOP;
    retry_ms := state[i - 3] - now;
  END IF;
END $$;

CREATE OR REPLACE FUNCTION sluice_v2_cc_refund{{refund}} AS $$
DECLARE
  length int;
  i int := 1;
BEGIN
  next := '{}';
  length := coalesce(array_length(state, 1), 0);
  WHILE i <= length LOOP
    IF state[i + 2] <> lease AND state[i] > now THEN
      next := next || ARRAY[state[i], state[i + 1], state[i + 2]];
    END IF;
    i := i + 3;
  END LOOP;
  length := coalesce(array_length(next, 1), 0);
  expires_at := CASE WHEN length > 0 THEN next[length - 2] ELSE now END;
END $$;
