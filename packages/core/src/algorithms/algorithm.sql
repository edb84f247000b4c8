-- Helpers the SQL twins share (PostgresStore, stores/postgres/schema.ts): the integer arithmetic of
-- algorithm.ts. PostgreSQL's `/` truncates toward zero; the steps floor, as Math.floor does.

-- Floor division of integers (b > 0), as idiv in algorithm.ts.
CREATE OR REPLACE FUNCTION sluice_v2_idiv(a bigint, b bigint) RETURNS bigint
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
  SELECT CASE WHEN a % b < 0 THEN a / b - 1 ELSE a / b END
$$;

-- Ceiling division of integers (b > 0), as ceilDiv in gcra.ts.
CREATE OR REPLACE FUNCTION sluice_v2_ceil_div(a bigint, b bigint) RETURNS bigint
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
  SELECT CASE WHEN a % b > 0 THEN a / b + 1 ELSE a / b END
$$;
