-- Sluice: the calls of PostgresStore, a batch of them decided in one statement (stores/postgres/schema.ts
-- fills in {{table}}, {{call}}, {{one}}, {{grace}} and {{sweep}}, and, in braces like theirs, set_codes
-- and set_step: the algorithm codes whose twins have a set-based step, and the subquery that steps a
-- policy with them; and mark, the build's fingerprint of this schema, which Readiness looks for).
-- {{call}} takes the calls one event-loop turn of a process made, locks every row they write in one
-- global order (policy keys, then reset marks, each sorted in the "C" collation: version 1's order), so
-- batches that share keys, in whatever order, never deadlock, nor with version 1's calls, then decides
-- each call as it would be decided alone in that order: all of them in one statement when they allow
-- it (the set-based path), else each in turn with {{one}}. It runs in the statement's own transaction at
-- READ COMMITTED, so none fails to serialize.
--
-- {{one}}: one call, on rows {{call}} holds already (never run on its own: it locks nothing).
-- op    'c' consume: charge every policy if all allow, none otherwise; 'p' peek: charge nothing;
--       'r' refund one charge; 'd' reset a subject (delete its keys, mark when: a refund gives back
--       nothing charged before)
-- keys  'c', 'p': one per policy, in the limiter's order; 'r': those, then the reset mark of each;
--       'd': the subject's keys of the subject-scoped policies, then the reset mark of each
-- codes the algorithm code of each policy ('d': none)
-- nums  per policy: limit, windowMs, burst
-- args  [1] now in ms from the caller's clock, or NULL for the database's clock (db_now); then
--       'c', 'p': cost, lease id; 'r': cost, lease id, chargedAt; 'd': each mark's life in ms
-- db_now the database's clock in ms, read once per batch, once its rows are locked
-- Returns ('c', 'p') 'now,allowed,remaining,resetMs,retryAfterMs,delayMs,...' per policy (allowed 1/0,
-- retryAfterMs -1: never); '' otherwise.
-- expires_at is always on the database's clock, for the sweep: under a caller's clock a row lives
-- {{grace}} ms longer than that clock says it matters (a stale state decides as no state does).
CREATE OR REPLACE FUNCTION {{one}}(op text, keys text[], codes text[], nums bigint[], args bigint[], db_now bigint)
RETURNS text LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  n int := coalesce(array_length(codes, 1), 0);
  clocked boolean := args[1] IS NOT NULL;
  now bigint := coalesce(args[1], db_now);
  cost bigint;
  lease bigint;
  s bigint[];
  e bigint;
  mark bigint[];
  r record;
  f record;
  every boolean := true;
  states text[] := '{}';
  nexts text[] := '{}';
  expiries bigint[] := '{}';
  reply bigint[] := ARRAY[now];
  m int;
BEGIN
  IF op = 'd' THEN
    m := coalesce(array_length(keys, 1), 0) / 2;
    DELETE FROM {{table}} WHERE key = ANY (keys[1:m]);
    INSERT INTO {{table}} (key, state, expires_at)
      SELECT u.k, ARRAY[now],
             CASE WHEN clocked THEN db_now + u.life + {{grace}} ELSE now + u.life END
      FROM unnest(keys[m + 1:2 * m], args[2:m + 1]) AS u(k, life)
      ORDER BY u.k COLLATE "C"
      ON CONFLICT (key) DO UPDATE SET state = EXCLUDED.state, expires_at = EXCLUDED.expires_at;
    RETURN '';
  END IF;

  cost := args[2];
  lease := args[3];

  IF op = 'r' THEN
    -- Only rows that hold a state: nothing was charged where there is none.
    FOR i IN 1..n LOOP
      -- A charge made before the subject's last reset (or in its millisecond): the reset took it already.
      -- Not for a lease, given back by its id, which the reset dropped (marksApply in stores/store.ts).
      mark := NULL;
      IF codes[i] <> 'cc' THEN
        SELECT t.state INTO mark FROM {{table}} t
          WHERE t.key = keys[n + i] AND (clocked OR t.expires_at > now);
      END IF;
      CONTINUE WHEN mark IS NOT NULL AND mark[1] >= args[4];
      s := NULL;
      SELECT t.state INTO s FROM {{table}} t WHERE t.key = keys[i] AND (clocked OR t.expires_at > now);
      CONTINUE WHEN s IS NULL;
      f := sluice_v2_refund(codes[i], s, now, cost, args[4], lease, nums[3 * i - 2], nums[3 * i - 1], nums[3 * i]);
      IF f.expires_at <= now THEN
        DELETE FROM {{table}} WHERE key = keys[i];
      ELSE
        UPDATE {{table}} SET state = f.next,
          expires_at = CASE WHEN clocked THEN db_now + f.expires_at - now + {{grace}} ELSE f.expires_at END
          WHERE key = keys[i];
      END IF;
    END LOOP;
    RETURN '';
  END IF;

  FOR i IN 1..n LOOP
    s := NULL;
    SELECT t.state INTO s FROM {{table}} t WHERE t.key = keys[i] AND (clocked OR t.expires_at > now);
    states[i] := s::text;
    r := sluice_v2_step(codes[i], s, now, cost, nums[3 * i - 2], nums[3 * i - 1], nums[3 * i], lease);
    every := every AND r.allowed;
    nexts[i] := r.next::text;
    expiries[i] := r.expires_at;
    reply := reply || ARRAY[CASE WHEN r.allowed THEN 1 ELSE 0 END, r.remaining, r.reset_ms, r.retry_ms, r.delay_ms];
  END LOOP;

  IF every AND op = 'c' THEN
    FOR i IN 1..n LOOP
      IF expiries[i] <= now THEN
        DELETE FROM {{table}} WHERE key = keys[i];
      ELSE
        -- An upsert: an earlier call of the batch may have deleted the row (a reset, a state that
        -- expired). Never a wait: another transaction inserting the key waits for this one's delete.
        INSERT INTO {{table}} (key, state, expires_at) VALUES (keys[i], nexts[i]::bigint[],
          CASE WHEN clocked THEN db_now + expiries[i] - now + {{grace}} ELSE expiries[i] END)
          ON CONFLICT (key) DO UPDATE SET state = EXCLUDED.state, expires_at = EXCLUDED.expires_at;
      END IF;
    END LOOP;
  ELSE
    -- Nothing is charged: a policy that would have allowed reports its state as it stands.
    FOR i IN 1..n LOOP
      IF reply[5 * i - 3] = 1 THEN
        r := sluice_v2_step(codes[i], states[i]::bigint[], now, 0, nums[3 * i - 2], nums[3 * i - 1], nums[3 * i], lease);
        reply[5 * i - 2] := r.remaining;
        reply[5 * i - 1] := r.reset_ms;
        reply[5 * i] := 0;
        reply[5 * i + 1] := r.delay_ms;
      END IF;
    END LOOP;
  END IF;
  RETURN array_to_string(reply, ',');
END $$;

-- A batch of calls, in the order the process made them: call i is ops[i], with the next key_counts[i]
-- keys, sizes[i] codes (3 * sizes[i] nums) and arg_counts[i] args. Returns each call's reply, joined
-- by ';'.
CREATE OR REPLACE FUNCTION {{call}}(ops text[], keys text[], key_counts int[], codes text[], nums bigint[],
  sizes int[], args bigint[], arg_counts int[])
-- Generic plans: the statements' plans hold for any batch (index lookups per key), and none is
-- planned again per call as custom plans of its arrays were.
RETURNS text LANGUAGE plpgsql VOLATILE SET plan_cache_mode = force_generic_plan AS $$
-- {{mark}}
DECLARE
  calls int := coalesce(array_length(ops, 1), 0);
  db_now bigint;
  ki int := 0;
  pi int := 0;
  ai int := 0;
  replies text[] := '{}';
  joined text;
  set_based boolean;
  owner int[];
BEGIN
  IF current_setting('transaction_isolation') <> 'read committed' THEN
    RAISE EXCEPTION 'sluice: PostgresStore runs at READ COMMITTED, not %', current_setting('transaction_isolation')
      USING HINT = 'do not set default_transaction_isolation for the role or database Sluice uses';
  END IF;

  -- A batch of consumes and peeks (each call's keys its policies' keys): policy n (key n, code n) is
  -- of call owner[n]. The set-based path (below) takes such a batch when no key is twice in it (so no
  -- call sees another's write: each is decided as it would be alone in turn), every call has 3 args
  -- (now, cost, lease), and every policy's twin has a set-based step.
  IF ops <@ '{c,p}'::text[] THEN
    owner := ARRAY(SELECT u.i FROM unnest(sizes) WITH ORDINALITY AS u(sz, i), generate_series(1, u.sz) AS g
      ORDER BY u.i, g);
    set_based := codes <@ '{{set_codes}}'::text[] AND 0 < ALL (sizes) AND 3 = ALL (arg_counts)
      AND (SELECT count(DISTINCT u.k) FROM unnest(keys) AS u(k)) = cardinality(keys);
  ELSE
    set_based := false;
  END IF;

  -- The rows the batch writes, locked all at once before any call runs, creating the missing ones (an
  -- empty state, which decides as none): no call of the batch then waits while holding a row out of
  -- order. They are a consume's and a reset's keys, a reset's marks, a refund's policy keys (it only
  -- reads the marks); a peek writes nothing and waits for nothing. The order is version 1's, which is
  -- released and cannot change: every policy key in key order, then the reset marks in key order (its
  -- reset deletes the subject's keys, then writes their marks); a key that is both is a policy key. A
  -- mark sorts before its keys ('#' < ':'), so one sort of both had a v1 reset and this one's of a
  -- subject deadlock. One INSERT takes them in that order, each as it comes: a row that is there is
  -- locked as FOR UPDATE locks it (ON CONFLICT DO UPDATE locks the row it does not update), one that
  -- is not is inserted, and one another transaction is inserting or deleting is waited for, then taken.
  IF owner IS NOT NULL THEN
    -- The consumes' keys, each once, and no mark.
    INSERT INTO {{table}} AS t (key, state, expires_at)
      SELECT DISTINCT u.k COLLATE "C", NULL::bigint[], 0 FROM unnest(keys, owner) AS u(k, i) WHERE ops[u.i] = 'c'
      ORDER BY 1
      ON CONFLICT (key) DO UPDATE SET key = EXCLUDED.key WHERE false;
  ELSE
    INSERT INTO {{table}} AS t (key, state, expires_at)
      SELECT h.k, NULL, 0 FROM (
        SELECT keys[c.ko + j] COLLATE "C" AS k, bool_and(c.op = 'd' AND j > c.kc / 2) AS mark
        FROM (
          SELECT u.op, u.kc, u.sz, sum(u.kc) OVER (ORDER BY u.i) - u.kc AS ko
          FROM unnest(ops, key_counts, sizes) WITH ORDINALITY AS u(op, kc, sz, i)
        ) c, generate_series(1, CASE c.op WHEN 'r' THEN c.sz WHEN 'p' THEN 0 ELSE c.kc END) AS j
        GROUP BY 1
      ) h ORDER BY h.mark, h.k
      ON CONFLICT (key) DO UPDATE SET key = EXCLUDED.key WHERE false;
  END IF;

  -- The clock once the rows are held, not before: a batch that waited for a lock across a window
  -- boundary would decide in the window it started in, over states of the next one.
  db_now := floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint;

  IF set_based THEN
    -- One statement reads every state, steps every policy (sluice_v2_*_rows, inlined: no function
    -- called per policy), writes what the calls allowed in full charge, and joins the replies as
    -- {{one}} would.
    WITH s AS (
      SELECT q.*, t.state
      FROM (
        SELECT u.k, u.i, u.n, coalesce(args[3 * u.i - 2], db_now) AS at, args[3 * u.i - 2] IS NOT NULL AS clocked,
          args[3 * u.i - 1] AS cost, u.code, nums[3 * u.n - 2] AS lim, nums[3 * u.n - 1] AS win, nums[3 * u.n] AS burst
        FROM unnest(keys, codes, owner) WITH ORDINALITY AS u(k, code, i, n)
      ) q LEFT JOIN {{table}} t ON t.key = q.k AND (q.clocked OR t.expires_at > q.at)
    ), d AS (
      -- Each twin steps its own policies (a UNION ALL of one SELECT per twin).
      SELECT x.*, ops[x.i] AS op, bool_and(x.allowed) OVER (PARTITION BY x.i) AS every
      FROM ({{set_step}}) x
    ), written AS (
      UPDATE {{table}} t SET state = d.next,
        expires_at = CASE WHEN d.clocked THEN db_now + d.expires_at - d.at + {{grace}} ELSE d.expires_at END
      FROM d WHERE t.key = d.k AND d.op = 'c' AND d.every AND d.expires_at > d.at
    ), dropped AS (
      DELETE FROM {{table}} t USING d WHERE t.key = d.k AND d.op = 'c' AND d.every AND d.expires_at <= d.at
    )
    SELECT string_agg(e.reply, ';' ORDER BY e.i) INTO joined FROM (
      SELECT d.i, min(d.at) || ',' || string_agg(concat_ws(',', d.allowed::int,
          -- Nothing is charged: a policy that would have allowed reports its state as it stands.
          CASE WHEN d.allowed AND NOT (d.op = 'c' AND d.every) THEN d.idle_remaining ELSE d.remaining END,
          CASE WHEN d.allowed AND NOT (d.op = 'c' AND d.every) THEN d.idle_reset_ms ELSE d.reset_ms END,
          d.retry_ms,
          CASE WHEN d.allowed AND NOT (d.op = 'c' AND d.every) THEN d.idle_delay_ms ELSE d.delay_ms END),
        ',' ORDER BY d.n) AS reply
      FROM d GROUP BY d.i
    ) e;
  ELSE
    FOR i IN 1..calls LOOP
      replies[i] := {{one}}(ops[i], keys[ki + 1:ki + key_counts[i]], codes[pi + 1:pi + sizes[i]],
        nums[3 * pi + 1:3 * (pi + sizes[i])], args[ai + 1:ai + arg_counts[i]], db_now);
      ki := ki + key_counts[i];
      pi := pi + sizes[i];
      ai := ai + arg_counts[i];
    END LOOP;
    joined := array_to_string(replies, ';');
  END IF;

  IF calls > cardinality(array_positions(ops, 'p')) THEN
    -- Expired rows go a bounded number per writing call at a time, skipping rows other batches hold:
    -- no full scan, no wait. Last, once the batch waits for nothing more: the rows it deletes are
    -- locked outside the key order, and a batch that waited while holding them could close a cycle
    -- with one waiting for them.
    DELETE FROM {{table}} WHERE key = ANY (ARRAY(
      SELECT t.key FROM {{table}} t WHERE t.expires_at < db_now
      ORDER BY t.expires_at LIMIT {{sweep}} * (calls - cardinality(array_positions(ops, 'p'))) FOR UPDATE SKIP LOCKED));
  END IF;
  RETURN joined;
END $$;
