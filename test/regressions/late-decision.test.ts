import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';

// When the response was already sent before an asynchronous decision came back (a timeout answered
// while the store or an async subject was slow), Express called res.setHeader after the headers were
// sent: the throw escaped as an unhandled rejection and Node exited. A late decision now gives back its
// charge and does nothing else, on Express and Fastify. Failed on 13f5928 (Express: the process died;
// Fastify: the late charge stayed, so the next request was refused).

interface Running {
  url: string;
  child: ChildProcess;
  stderr: () => string;
}

function start(framework: string): Promise<Running> {
  const child = spawn(
    process.execPath,
    ['--import', join(__dirname, '../chaos/register.mjs'), join(__dirname, 'servers/late-decision.mjs')],
    { env: { ...process.env, FRAMEWORK: framework }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let err = '';
  child.stderr!.on('data', (chunk) => {
    err += chunk;
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no READY: ${err}`)), 20_000);
    child.stdout!.on('data', (chunk: Buffer) => {
      const port = /READY (\d+)/.exec(String(chunk))?.[1];
      if (port === undefined) return;
      clearTimeout(timer);
      resolve({ url: `http://127.0.0.1:${port}/`, child, stderr: () => err });
    });
  });
}

describe.each(['express', 'fastify'])('%s: a decision that comes back after the response', (framework) => {
  let server: Running;
  beforeAll(async () => {
    server = await start(framework);
  });
  afterAll(() => {
    server.child.kill();
  });

  it('neither crashes the process nor keeps its charge', async () => {
    const slow = await fetch(server.url, { headers: { 'x-slow': '1' } });
    expect(slow.status).toBe(503);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(server.child.exitCode).toBeNull();
    // The late decision gave its unit back: the limit of 1 is still whole.
    expect((await fetch(server.url)).status).toBe(200);
    expect((await fetch(server.url)).status).toBe(429);
    expect(server.stderr()).not.toMatch(/ERR_HTTP_HEADERS_SENT|Unhandled/);
  });
});
