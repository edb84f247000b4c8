/**
 * The test app's own IPC messages, on the channel ClusterStore shares: the primary asks a worker to do
 * something and waits for its answer. Like any app beside ClusterStore, both ends skip Sluice's
 * messages with ClusterStore.isMessage, and Sluice skips these.
 */
import cluster, { type Worker } from 'node:cluster';
import { ClusterStore } from '@sluice/core';

export interface Ask {
  app: 'ask';
  n: number;
  command: string;
  args?: unknown;
}

export interface Answer {
  app: 'answer';
  n: number;
  value?: unknown;
  error?: string;
}

/**
 * Messages the app listeners saw, by side (Sluice's counted by the calls they carry, and as messages):
 * Sluice's never reach them.
 */
export const seen = { app: 0, sluice: 0, sluiceMessages: 0, taggedInside: 0 };

/** The calls (or answers) a message of Sluice carries: a worker's calls of one turn travel together. */
function carried(message: unknown): number {
  const { calls, replies } = message as { calls?: unknown[]; replies?: unknown[] };
  const inside = calls ?? replies;
  if (inside === undefined) return 1;
  seen.taggedInside += inside.filter(ClusterStore.isMessage).length;
  return inside.length;
}

let asked = 0;
const waiting = new Map<number, (answer: Answer) => void>();
let listening = false;

function listenInPrimary(): void {
  if (listening) return;
  listening = true;
  cluster.on('message', (_worker, message: unknown) => {
    if (ClusterStore.isMessage(message)) {
      seen.sluice += carried(message);
      seen.sluiceMessages++;
      return;
    }
    seen.app++;
    const answer = message as Answer;
    if (answer?.app === 'answer') waiting.get(answer.n)?.(answer);
  });
}

/** Asks `worker` to run `command`; resolves with its value, rejects with its error. */
export function ask<T>(worker: Worker, command: string, args?: unknown): Promise<T> {
  listenInPrimary();
  const n = ++asked;
  return new Promise<T>((resolve, reject) => {
    waiting.set(n, (answer) => {
      waiting.delete(n);
      if (answer.error !== undefined) reject(new Error(answer.error));
      else resolve(answer.value as T);
    });
    worker.send({ app: 'ask', n, command, args } satisfies Ask);
  });
}

/** In a worker: answers the primary's asks with `handlers`; other app messages go to `other`. */
export function serve(
  handlers: Record<string, (args: unknown) => Promise<unknown> | unknown>,
  other: (message: unknown) => void = () => {},
): void {
  process.on('message', (message: unknown) => {
    if (ClusterStore.isMessage(message)) {
      seen.sluice += carried(message);
      seen.sluiceMessages++;
      return;
    }
    seen.app++;
    const request = message as Ask;
    if (request?.app !== 'ask') return other(message);
    const handler = handlers[request.command];
    Promise.resolve()
      .then(() => {
        if (handler === undefined) throw new Error(`no command ${request.command}`);
        return handler(request.args);
      })
      .then(
        (value) => process.send!({ app: 'answer', n: request.n, value } satisfies Answer),
        (error: unknown) =>
          process.send!({ app: 'answer', n: request.n, error: String(error) } satisfies Answer),
      );
  });
  // Messages sent before this listener would be lost: the primary waits for this one first.
  process.send!({ app: 'ready' });
}

/** Forks `count` workers running this same script, and waits until each serves asks. */
export async function forkWorkers(count: number, env: Record<string, string> = {}): Promise<Worker[]> {
  return Promise.all(Array.from({ length: count }, () => forkOne(env)));
}

export function forkOne(env: Record<string, string> = {}): Promise<Worker> {
  const worker = cluster.fork(env);
  return new Promise((resolve, reject) => {
    const ready = (message: unknown) => {
      if ((message as { app?: string })?.app !== 'ready') return;
      worker.off('message', ready);
      resolve(worker);
    };
    worker.on('message', ready);
    worker.once('exit', (code) => reject(new Error(`worker exited (${code}) before it was ready`)));
  });
}

/** What a primary prints for the test: one line of JSON, then it ends its workers and itself. */
export function report(result: unknown): void {
  process.stdout.write(`RESULT ${JSON.stringify(result)}\n`);
  for (const worker of Object.values(cluster.workers ?? {})) worker?.kill();
  process.exit(0);
}
