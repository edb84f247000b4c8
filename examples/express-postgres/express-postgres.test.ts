import pg from 'pg';
import { describePostgres, type ServerProcess, startPostgres } from '../../test/support/postgres.js';
import { ask, listenExpress, type Running, statuses, uniquePrefix } from '../shared/listen.js';
import { createApp } from './app.js';

describePostgres('examples/express-postgres', () => {
  let server: ServerProcess;
  let pool: pg.Pool;
  let servers: Running[];
  beforeAll(async () => {
    server = await startPostgres();
    pool = new pg.Pool({ connectionString: server.url, max: 4 });
  }, 60_000);
  afterAll(async () => {
    await pool?.end();
    await server?.stop();
  });
  beforeEach(async () => {
    // Two servers on one database, as two processes behind a load balancer would be.
    const prefix = uniquePrefix('express-postgres');
    servers = [
      await listenExpress(createApp({ pool, prefix, storeTimeout: '5s' })),
      await listenExpress(createApp({ pool, prefix, storeTimeout: '5s' })),
    ];
  });
  afterEach(async () => {
    for (const running of servers) await running.close();
  });

  it('sends both policies in the RateLimit fields', async () => {
    const answer = await ask(`${servers[0]!.url}/`);
    expect(answer.status).toBe(200);
    expect(answer.headers.get('ratelimit-policy')).toBe('"minute";q=5;w=60, "hourly";q=100;w=3600');
    expect(answer.headers.get('ratelimit')).toMatch(/^"minute";r=4;t=\d+, "hourly";r=99;t=\d+$/);
  });

  it('two servers draw from one quota: exactly 5 of 12 concurrent requests pass, the hourly charged 5 times', async () => {
    const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => ask(`${servers[i % 2]!.url}/`)));
    expect(statuses(answers).filter((s) => s === 200)).toHaveLength(5);
    const denied = answers.filter((a) => a.status === 429);
    expect(denied).toHaveLength(7);
    expect(denied[0]!.body.policy).toBe('minute');
    expect(denied[0]!.headers.get('ratelimit')).toMatch(/"hourly";r=95;/);
  });
});
