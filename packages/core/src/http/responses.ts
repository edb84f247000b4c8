import { BAN_POLICY } from '../ban-names.js';
import { retryAfterSeconds } from './headers.js';
import { STATUS_TITLES } from './status-titles.js';

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

function problem(
  status: number,
  detail: string,
  policy: string,
  retryAfter: number | undefined,
): ProblemBody {
  const body: ProblemBody = { status, title: STATUS_TITLES[status] ?? 'Error', detail, policy };
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

/**
 * Problem bodies as JSON, made by `body`: one depends only on the policy and the whole seconds to wait,
 * so one formatted for that pair serves every later request that gets the same (a denied or banned
 * subject is answered many times a second; stringifying took a third of Sluice's own work on a denied
 * request). Per policy (a limiter has a few) at most `MAX_BODIES` are kept: past that they start anew.
 */
export class ProblemBodies {
  private readonly bodies = new Map<string, Map<number, string>>();

  constructor(private readonly body: (policy: string, retryAfterMs: number) => ProblemBody) {}

  json(policy: string, retryAfterMs: number): string {
    // 0 stands for never: Retry-After is at least 1 s.
    const seconds = retryAfterSeconds(retryAfterMs) ?? 0;
    let bySeconds = this.bodies.get(policy);
    if (bySeconds === undefined) {
      bySeconds = new Map();
      this.bodies.set(policy, bySeconds);
    }
    let json = bySeconds.get(seconds);
    if (json === undefined) {
      if (bySeconds.size === MAX_BODIES) bySeconds.clear();
      json = JSON.stringify(this.body(policy, retryAfterMs));
      bySeconds.set(seconds, json);
    }
    return json;
  }
}

/** How many bodies a ProblemBodies keeps per policy. */
export const MAX_BODIES = 256;

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
