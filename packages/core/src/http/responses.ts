import { STATUS_CODES } from 'node:http';
import { retryAfterSeconds } from './headers.js';

/**
 * The bodies of blocked requests: RFC 9457 problem details (`application/problem+json`), with the
 * default type `about:blank`, so `title` is the status phrase. Every body has `status`, `title`,
 * `detail` and `policy`; `retryAfter` (seconds, as in Retry-After) is there whenever a retry can
 * succeed: it is absent for `denyList` and for a cost no policy could ever allow.
 */
export interface ProblemBody {
  status: number;
  title: string;
  detail: string;
  /** The binding policy's name; `'deny-list'` for denyList, `'ban'` for a ban. */
  policy: string;
  retryAfter?: number;
}

/** The policy name reported for denyList answers. */
export const DENY_LIST_POLICY = 'deny-list';
/** The policy name of ban answers (the internal ban limiter's policy). */
export const BAN_POLICY = 'ban';

function problem(
  status: number,
  detail: string,
  policy: string,
  retryAfter: number | undefined,
): ProblemBody {
  const body: ProblemBody = { status, title: STATUS_CODES[status] ?? 'Error', detail, policy };
  if (retryAfter !== undefined) body.retryAfter = retryAfter;
  return body;
}

function after(retryAfter: number | undefined): string {
  return retryAfter === undefined ? '' : ` Retry in ${retryAfter} second${retryAfter === 1 ? '' : 's'}.`;
}

/** A request a policy denied (429, or the `statusCode` option). */
export function limitedBody(status: number, policy: string, retryAfterMs: number): ProblemBody {
  const retryAfter = retryAfterSeconds(retryAfterMs);
  const detail =
    retryAfter === undefined
      ? `This request costs more than the rate limit "${policy}" allows at once.`
      : `Rate limit "${policy}" exceeded.${after(retryAfter)}`;
  return problem(status, detail, policy, retryAfter);
}

/** A client on the denyList: 403, no retry. */
export function deniedBody(): ProblemBody {
  return problem(403, 'This client is not allowed.', DENY_LIST_POLICY, undefined);
}

/** A banned subject: 403 until the ban ends. */
export function bannedBody(retryAfterMs: number): ProblemBody {
  const retryAfter = retryAfterSeconds(retryAfterMs);
  return problem(
    403,
    `Banned after repeated rate limit denials.${after(retryAfter)}`,
    BAN_POLICY,
    retryAfter,
  );
}

/** The store failed and `onStoreError` is 'deny': 503, retry in 1 s. */
export function storeErrorBody(policy: string): ProblemBody {
  return problem(503, `The rate limiter is unavailable.${after(1)}`, policy, 1);
}
