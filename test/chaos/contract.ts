import { ask, type Load, type Sample } from './load.js';
import type { AppServer, Mode } from './servers.js';

/** What the chaos suites assert of every server, whatever fault it went through. */

/** How soon after Redis is back every decision must come from it again. */
export const RECOVERY_MS = 2000;
/**
 * The same after a Cluster failover: a cluster client learns the promoted master only from a call that
 * fails on the old topology, and an open circuit lets one probe through a second (PROBE_AFTER_MS), so
 * a probe spent on the stale topology costs one more second (the final CI run of 7d4f257 saw
 * node-redis 5 back 2.03 to 2.12 s after the promotion: within two probes and storeTimeout).
 */
export const CLUSTER_RECOVERY_MS = 3000;

/** The statuses API.md allows for a degraded decision in each onStoreError mode. */
const DEGRADED_STATUSES: Record<Mode, readonly number[]> = {
  local: [200, 429],
  allow: [200],
  deny: [503],
};

/** Every answer either came from Redis (200/429) or is a degraded answer its mode allows. */
export function contractBreaches(samples: readonly Sample[], mode: Mode): string[] {
  const bad: string[] = [];
  for (const s of samples) {
    const why =
      s.failed !== undefined
        ? `no answer: ${s.failed}`
        : s.degraded
          ? !DEGRADED_STATUSES[mode].includes(s.status)
            ? `degraded ${s.status}`
            : s.status === 503 && s.retryAfter !== '1'
              ? `503 with Retry-After ${s.retryAfter}`
              : undefined
          : ![200, 429].includes(s.status)
            ? `${s.status} without degraded`
            : undefined;
    if (why !== undefined) bad.push(`${s.server} at ${s.at}: ${why}`);
  }
  return bad;
}

/** Crash, unhandled rejections and slow decisions, as the server process reports them. */
export async function healthProblems(server: AppServer): Promise<string[]> {
  if (!server.alive()) return [`${server.label} crashed:\n${server.errors()}`];
  const stats = await server.stats();
  const problems = stats.unhandled.map((u) => `${server.label} unhandled rejection: ${u}`);
  if (stats.slow.length > 0)
    problems.push(`${server.label} answered slower than storeTimeout + 100 ms: ${stats.slow} ms`);
  return problems;
}

/** Degraded answers sent from `recoveredAt + RECOVERY_MS` until `until`: there must be none. */
export function lateRecoveries(
  load: Load,
  server: AppServer,
  recoveredAt: number,
  until: number,
  withinMs = RECOVERY_MS,
): string[] {
  const window = load.of(server.label, recoveredAt + withinMs, until);
  if (window.length === 0)
    return [`${server.label}: no requests between ${recoveredAt + withinMs} and ${until}`];
  return window
    .filter((s) => s.degraded)
    .map((s) => `${s.server}: degraded ${s.at - recoveredAt} ms after recovery`);
}

/** Whether the fault showed: some answer within [from, to) was degraded. */
export function sawDegraded(load: Load, server: AppServer, from: number, to: number): boolean {
  return load.of(server.label, from, to).some((s) => s.degraded);
}

/** `count` answers for one subject, one after the other. */
export async function burst(server: AppServer, subject: string, count: number): Promise<Sample[]> {
  const answers: Sample[] = [];
  for (let i = 0; i < count; i++) answers.push(await ask(server, subject));
  return answers;
}

const shown = (answers: readonly Sample[]) =>
  answers.map((a) => `${a.status}${a.degraded ? ' degraded' : ''}`);

/**
 * While the store is down, a 'local' server still limits: a fresh subject gets `limit` degraded
 * answers from the in-process fallback, then a degraded 429.
 */
export function localLimitBreaches(answers: readonly Sample[], limit: number): string[] {
  const expected = [...Array<string>(limit).fill('200 degraded'), '429 degraded'];
  const seen = shown(answers);
  return seen.join() === expected.join() ? [] : [seen.join(', ')];
}

/** A fresh subject gets exactly `limit` answers from Redis, then a 429 from Redis. */
export async function limitsOnRedis(server: AppServer, limit: number): Promise<string[]> {
  const seen = shown(await burst(server, `fresh-${server.label}-${Date.now()}`, limit + 1));
  const expected = [...Array<string>(limit).fill('200'), '429'];
  return seen.join() === expected.join() ? [] : [`${server.label}: ${seen.join(', ')}`];
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** One line per server: answers, degraded answers per fault window, slowest decision. */
export async function report(
  load: Load,
  servers: readonly AppServer[],
  marks: Record<string, number>,
): Promise<string> {
  const names = Object.keys(marks);
  const lines = [`fault windows: ${names.join(' → ')}`];
  for (const server of servers) {
    const stats = server.alive() ? await server.stats() : undefined;
    const windows = names.slice(0, -1).map((name, i) => {
      const inWindow = load.of(server.label, marks[name], marks[names[i + 1]!]);
      return `${name} ${inWindow.filter((s) => s.degraded).length}/${inWindow.length}`;
    });
    const statuses = new Map<number, number>();
    for (const s of load.of(server.label)) statuses.set(s.status, (statuses.get(s.status) ?? 0) + 1);
    lines.push(
      `${`${server.label} on ${server.client}`.padEnd(30)} answers ${[...statuses].map(([k, v]) => `${k}×${v}`).join(' ')}; degraded ${windows.join(', ')}; slowest answer ${stats?.maxMs.toFixed(0)} ms (${stats?.stalled} slow only by a starved process)`,
    );
  }
  return lines.join('\n');
}
