import { setTimeout as sleep } from 'node:timers/promises';
import { routeOf, startServers } from './servers.js';

/**
 * @typedef {{ status: number, policy: string, rateLimit: string, retryAfter: string | null, tookMs: number }} Answer
 * @typedef {{ allowed: number, denied: number, retryAfter: string, longestMs: number }} Counts
 * @typedef {{ algorithm: string, policy: string, express: Counts, fastify: Counts }} Summary
 */

/**
 * One response, as the table shows it.
 * @returns {Promise<Answer>}
 */
async function send(url) {
  const started = performance.now();
  const response = await fetch(url);
  await response.arrayBuffer();
  return {
    status: response.status,
    policy: response.headers.get('ratelimit-policy') ?? '',
    rateLimit: response.headers.get('ratelimit') ?? '',
    retryAfter: response.headers.get('retry-after'),
    tookMs: Math.round(performance.now() - started),
  };
}

/**
 * `"5-per-1s";r=4;t=1` -> `r=4 t=1`: the fields that change from row to row. A concurrency policy has
 * no `t` (a lease ends when its response does): `"2-concurrent";r=0` -> `r=0`.
 */
function fields(rateLimit) {
  const match = /;r=(\d+)(?:;t=(\d+))?/.exec(rateLimit);
  if (match === null) return rateLimit || '-';
  return match[2] === undefined ? `r=${match[1]}` : `r=${match[1]} t=${match[2]}`;
}

/** Waits until early in a whole second, so a burst does not straddle a window boundary. */
async function alignToSecond() {
  const into = Date.now() % 1000;
  if (into > 300) await sleep(1000 - into + 20);
}

/**
 * A time in at most six characters (`999 ms`, `1.2 s`, `123 s`), so a slow answer on a busy machine
 * keeps the table's columns where the header put them.
 */
function shortDuration(ms) {
  if (ms < 1000) return `${ms} ms`;
  if (ms < 99_950) return `${(ms / 1000).toFixed(1)} s`;
  return `${Math.round(ms / 1000)} s`;
}

/** The table's two header lines and one row per request: columns are padded before they are painted. */
export function tableLines(c) {
  const cell = (r) => {
    const status = String(r.status).padEnd(8);
    const retry = r.retryAfter === null ? '-' : `${r.retryAfter} s`;
    return `${r.status < 400 ? c.green(status) : c.red(status)}${fields(r.rateLimit).padEnd(11)}${retry.padEnd(13)}${shortDuration(r.tookMs).padStart(6)}`;
  };
  const columns = `${'status'.padEnd(8)}${'RateLimit'.padEnd(11)}${'Retry-After'.padEnd(13)}${'took'.padStart(6)}`;
  return {
    header: () =>
      c.dim(`  ${''.padEnd(16)}│ ${'Express'.padEnd(38)}  │ Fastify\n`) +
      c.dim(`  ${'req'.padEnd(6)} ${'sent'.padEnd(9)}│ ${columns}  │ ${columns}\n`),
    /** @param {string} label @param {number} sentMs @param {Answer[]} pair */
    row: (label, sentMs, pair) =>
      `  ${label.padEnd(6)} ${`+${shortDuration(sentMs)}`.padEnd(9)}│ ${cell(pair[0])}  │ ${cell(pair[1])}\n`,
  };
}

export function painter(color) {
  const paint = (code) => (text) => (color ? `\x1b[${code}m${text}\x1b[0m` : text);
  return { bold: paint('1'), dim: paint('2'), green: paint('32'), red: paint('31'), cyan: paint('36') };
}

/** Requests each server answers before the tables. */
const WARM_UP = 20;

/**
 * Runs every scenario against both servers and writes a table per algorithm as it goes.
 * Returns, per algorithm and framework, the requests allowed and denied.
 *
 * @param {{ write: (text: string) => void, color?: boolean, scenarios: typeof import('./scenarios.js').SCENARIOS }} options
 * @returns {Promise<Summary[]>}
 */
export async function runDemo({ write, color = false, scenarios }) {
  const c = painter(color);
  const servers = await startServers(scenarios);
  /** @type {Summary[]} */
  const summary = [];
  const table = tableLines(c);
  const row = (label, sentMs, pair) => write(table.row(label, sentMs, pair));

  try {
    write(
      `${c.bold('Sluice demo')}: every algorithm on Express and on Fastify, in-memory store, no Redis.\n`,
    );
    write(c.dim(`  Express ${servers.expressUrl}   Fastify ${servers.fastifyUrl}\n`));
    write(
      c.dim('  Each row is one request to both; RateLimit shows r (remaining) and t (seconds to reset).\n'),
    );
    // A cold server's first answers take tens of milliseconds (code loading, JIT, the first
    // connection): warm both on a path no limiter guards, so the times below are the requests' own.
    for (let i = 0; i < WARM_UP; i++)
      await Promise.all([servers.expressUrl, servers.fastifyUrl].map((u) => send(`${u}/warm-up`)));
    write(
      c.dim(
        `  Both servers answered ${WARM_UP} unlimited requests first: "took" is a warm request's time.\n`,
      ),
    );

    for (const scenario of scenarios) {
      const path = routeOf(scenario);
      const urls = [servers.expressUrl + path, servers.fastifyUrl + path];
      const both = () => Promise.all(urls.map(send));
      /** @type {[Answer[], Answer[]]} */
      const results = [[], []];
      /** @param {Answer[]} pair */
      const keep = (pair) => {
        results[0].push(/** @type {Answer} */ (pair[0]));
        results[1].push(/** @type {Answer} */ (pair[1]));
      };

      write(`\n${c.bold(c.cyan(scenario.algorithm))}  ${c.dim(scenario.note)}\n`);
      if (scenario.aligned) await alignToSecond();
      const start = performance.now();
      const since = () => Math.round(performance.now() - start);
      let headerShown = false;
      const header = (pair) => {
        if (headerShown) return;
        headerShown = true;
        write(c.dim(`  RateLimit-Policy: ${pair[0].policy}\n`));
        write(table.header());
      };

      if (scenario.burst) {
        for (let i = 1; i <= scenario.burst; i++) {
          const sentMs = since();
          const pair = await both();
          keep(pair);
          header(pair);
          row(`#${i}`, sentMs, pair);
        }
      } else {
        const at = scenario.concurrent ?? 0;
        write(c.dim(`  sending ${at} requests at once to each…\n`));
        const sentMs = since();
        const sent = await Promise.all(
          urls.map((url) => Promise.all(Array.from({ length: at }, () => send(url)))),
        );
        for (let i = 0; i < at; i++) {
          const pair = /** @type {Answer[]} */ ([sent[0]?.[i], sent[1]?.[i]]);
          keep(pair);
          header(pair);
          row(`#${i + 1}`, sentMs, pair);
        }
      }

      if (scenario.retry) {
        const waits = results.map((rs) => Number(rs.find((r) => r.retryAfter !== null)?.retryAfter ?? 0));
        const waitS = Math.max(...waits);
        write(c.dim(`  waiting ${waitS} s, as Retry-After says…\n`));
        await sleep(waitS * 1000);
        const sentMs = since();
        const pair = await both();
        keep(pair);
        row('again', sentMs, pair);
      }
      for (let i = 0; i < (scenario.after ?? 0); i++) {
        const sentMs = since();
        const pair = await both();
        keep(pair);
        row('after', sentMs, pair);
      }

      /** @param {Answer[]} rs @returns {Counts} */
      const count = (rs) => ({
        allowed: rs.filter((r) => r.status < 400).length,
        denied: rs.filter((r) => r.status === 429).length,
        retryAfter: `${rs.find((r) => r.retryAfter !== null)?.retryAfter ?? '-'} s`,
        longestMs: Math.max(...rs.map((r) => r.tookMs)),
      });
      summary.push({
        algorithm: scenario.algorithm,
        policy: results[0][0]?.policy ?? '',
        express: count(results[0]),
        fastify: count(results[1]),
      });
    }

    write(`\n${c.bold('Summary')}  (Express | Fastify)\n`);
    // As wide as the longest policy (the concurrency one is 42 characters), two spaces apart.
    const policyWidth = Math.max('policy'.length, ...summary.map((s) => s.policy.length)) + 2;
    write(
      c.dim(
        `  ${'algorithm'.padEnd(15)}${'policy'.padEnd(policyWidth)}${'allowed'.padEnd(10)}${'denied'.padEnd(10)}first Retry-After\n`,
      ),
    );
    for (const s of summary) {
      const pair = (key) => `${s.express[key]} | ${s.fastify[key]}`;
      write(
        `  ${s.algorithm.padEnd(15)}${s.policy.padEnd(policyWidth)}${pair('allowed').padEnd(10)}${pair('denied').padEnd(10)}${pair('retryAfter')}\n`,
      );
    }
    const agree = summary.every(
      (s) => s.express.allowed === s.fastify.allowed && s.express.denied === s.fastify.denied,
    );
    write(
      agree
        ? c.green('\nExpress and Fastify made the same decisions for every algorithm.\n')
        : c.red('\nExpress and Fastify differed somewhere above (timing on a busy machine can do that).\n'),
    );
    write(
      c.dim('Next: README.md (quick starts), examples/ (one command each), docs/algorithms.md (charts).\n'),
    );
    return summary;
  } finally {
    await servers.close();
  }
}
