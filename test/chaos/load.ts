import type { AppServer } from './servers.js';

/**
 * Steady, bounded load from this process over loopback: a few request loops per server, each
 * pausing between requests: one loop on a hot subject (so limiting shows), the others over
 * many subjects (so quota is rarely the reason for their answers). Every
 * answer is kept with when it was asked, for the assertions.
 */
export interface Sample {
  server: string;
  /** Date.now() when the request was sent. */
  at: number;
  ms: number;
  status: number;
  degraded: boolean;
  retryAfter: string | null;
  /** A transport failure (connection refused, reset, timeout) instead of an answer. */
  failed?: string;
}

const LOOPS_PER_SERVER = 2;
const PAUSE_MS = 30;
const SUBJECTS = 200;
const REQUEST_TIMEOUT_MS = 5000;

export async function ask(server: AppServer, subject: string): Promise<Sample> {
  const at = Date.now();
  const started = performance.now();
  try {
    const res = await fetch(`${server.url}/`, {
      headers: { 'x-subject': subject },
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    const body = (await res.json()) as { degraded?: boolean };
    return {
      server: server.label,
      at,
      ms: performance.now() - started,
      status: res.status,
      degraded: body.degraded === true,
      retryAfter: res.headers.get('retry-after'),
    };
  } catch (error) {
    return {
      server: server.label,
      at,
      ms: performance.now() - started,
      status: 0,
      degraded: false,
      retryAfter: null,
      failed: String(error),
    };
  }
}

export class Load {
  readonly samples: Sample[] = [];
  private running = false;
  private loops: Promise<void>[] = [];

  constructor(private readonly servers: readonly AppServer[]) {}

  start(): void {
    this.running = true;
    let n = 0;
    for (const server of this.servers) {
      for (let i = 0; i < LOOPS_PER_SERVER; i++) {
        // The first loop of each server hammers one subject, so limiting shows.
        const subject = () => (i === 0 ? 'hot' : `load-${n++ % SUBJECTS}`);
        this.loops.push(
          (async () => {
            while (this.running) {
              this.samples.push(await ask(server, subject()));
              await new Promise((resolve) => setTimeout(resolve, PAUSE_MS));
            }
          })(),
        );
      }
    }
  }

  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.loops);
  }

  /** The samples of one server sent within [from, to). */
  of(server: string, from = 0, to = Number.POSITIVE_INFINITY): Sample[] {
    return this.samples.filter((s) => s.server === server && s.at >= from && s.at < to);
  }
}
