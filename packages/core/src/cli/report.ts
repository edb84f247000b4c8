import { BAN_NOT_CHECKED } from './ban-check.js';
import type { LimiterReport } from './commands.js';

/** '1h 2m', '4.5s', '250ms': durations as an operator reads them. */
export function humanMs(ms: number): string {
  if (!Number.isFinite(ms)) return 'never';
  if (ms < 1000) return `${Math.ceil(ms)}ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)}s`;
  const parts: string[] = [];
  let left = Math.ceil(ms / 1000);
  for (const [unit, size] of [
    ['d', 86_400],
    ['h', 3600],
    ['m', 60],
    ['s', 1],
  ] as const) {
    const n = Math.floor(left / size);
    left -= n * size;
    if (n > 0) parts.push(`${n}${unit}`);
  }
  return parts.slice(0, 2).join(' ');
}

/** Left-aligned columns, two spaces apart. */
function table(rows: readonly (readonly string[])[]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows
    .map((r) =>
      r
        .map((cell, i) => cell.padEnd(widths[i]!))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

/**
 * `unconfirmed`: the subject may not be the app's (a warning said why): "allowed" is not said flatly.
 * `banChecked`: the options say whether the app bans; else a report without a ban is "not checked".
 */
export function inspectText(
  subject: string,
  storeLabel: string,
  reports: readonly LimiterReport[],
  { unconfirmed = false, banChecked = true }: { unconfirmed?: boolean; banChecked?: boolean } = {},
): string {
  const allowed = unconfirmed
    ? 'allowed now, UNCONFIRMED: this credential may not hash as in the app (see the warning)'
    : 'allowed now';
  const blocks = reports.map((r) => {
    const verdict = r.allowed
      ? `${allowed}${r.counted ? '' : ' (nothing counted for this subject)'}`
      : `LIMITED, retry in ${humanMs(r.retryAfterMs)}`;
    const title = `limiter "${r.limiter}"${r.plan === null ? '' : ` (plan ${r.plan})`}: ${verdict}`;
    const rows = [
      ['policy', 'algorithm', 'limit', 'window', 'remaining', 'resets in', 'resets at'],
      ...r.policies.map((p) => [
        p.name,
        p.algorithm,
        String(p.limit),
        humanMs(p.windowMs),
        p.allowed ? String(p.remaining) : `${p.remaining} (denied)`,
        humanMs(p.resetMs),
        p.resetAt,
      ]),
    ];
    const ban =
      r.ban === null
        ? `ban: ${banChecked ? 'none configured' : BAN_NOT_CHECKED}`
        : r.ban.banned
          ? `ban: BANNED for ${humanMs(r.ban.endsInMs)} (until ${r.ban.endsAt})`
          : 'ban: not banned';
    return `${title}\n${table(rows)}\n${ban}`;
  });
  return `subject ${subject} on ${storeLabel}\n\n${blocks.join('\n\n')}`;
}

/**
 * `counted`: whether a policy counted the subject. Without it, "reset" alone read as success while the
 * app, whose keys were elsewhere, kept limiting the client (newcomer review 28); a lifted ban is said
 * apart, as it is no sign that the policies' keys were the app's.
 */
export function resetText(
  subject: string,
  storeLabel: string,
  limiters: readonly string[],
  { counted, banLifted, ban }: { counted: boolean; banLifted: boolean; ban: string },
): string {
  const where = `${subject} under ${limiters.map((l) => `"${l}"`).join(', ')} on ${storeLabel}`;
  if (counted) return `reset ${where} (${ban})`;
  const nothing = 'nothing was counted for this subject under these options';
  return banLifted
    ? `${where}: its ban lifted, but ${nothing}: no counter to reset`
    : `${where}: ${nothing}: nothing to reset (${ban})`;
}
