import { type ChildProcess, spawn } from 'node:child_process';
import { request } from 'node:http';
import { join } from 'node:path';
import { closedPort } from '../shared/listen.js';

/**
 * The example as it runs: server.js as a primary with 4 workers behind one port (the sources through
 * the chaos suite's module hooks, so no build is needed), asked over real connections, a new one per
 * request, so the primary hands them to one worker after another.
 */
jest.setTimeout(60_000);

interface Answer {
  status: number;
  /** The worker that answered (the example's x-worker header). */
  worker: string;
  body: { remaining?: number; policy?: string };
}

/** One GET on a connection of its own (no keep-alive: the next request may go to another worker). */
function get(url: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent: false }, (res) => {
      let text = '';
      res.on('data', (chunk) => {
        text += chunk;
      });
      res.on('end', () =>
        resolve({ status: res.statusCode!, worker: String(res.headers['x-worker']), body: JSON.parse(text) }),
      );
    });
    req.on('error', reject);
    req.end();
  });
}

describe('examples/node-cluster', () => {
  let server: ChildProcess;
  let url: string;
  let output = '';

  beforeAll(async () => {
    const port = await closedPort();
    server = spawn(
      process.execPath,
      ['--import', join(__dirname, '../../test/chaos/register.mjs'), join(__dirname, 'server.js')],
      { env: { ...process.env, PORT: String(port) }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    server.stderr!.on('data', (chunk) => {
      output += chunk;
    });
    await new Promise<void>((resolve, reject) => {
      // Four workers compile the sources as they load them: at load 16 that outlasted 30 s (CI on 3a9dfa8).
      const timer = setTimeout(() => reject(new Error(`no READY: ${output}`)), 50_000);
      server.stdout!.on('data', (chunk) => {
        output += chunk;
        if (!output.includes(`READY ${port}`)) return;
        clearTimeout(timer);
        resolve();
      });
    });
    url = `http://127.0.0.1:${port}/`;
  });

  afterAll(() => {
    server.kill('SIGTERM');
  });

  it('keeps one limit of 10 across 4 workers: the 11th request is refused whichever worker serves it', async () => {
    const answers: Answer[] = [];
    for (let i = 0; i < 14; i++) answers.push(await get(url));
    expect(answers.map((a) => a.status)).toEqual([...Array(10).fill(200), 429, 429, 429, 429]);
    // Counted down as one limit, though the requests were served by several workers.
    expect(answers.slice(0, 10).map((a) => a.body.remaining)).toEqual([9, 8, 7, 6, 5, 4, 3, 2, 1, 0]);
    // The primary hands connections to the workers in turn: allowed and refused requests alike were
    // served by several of them.
    expect(new Set(answers.slice(0, 10).map((a) => a.worker)).size).toBeGreaterThan(1);
    expect(new Set(answers.slice(10).map((a) => a.worker)).size).toBeGreaterThan(1);
    expect(answers[10]!.body).toMatchObject({ status: 429, policy: '10-per-1m' });
    expect(output).not.toMatch(/Error|SluiceWarning/);
  });
});
