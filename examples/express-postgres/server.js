// PostgreSQL first (from the repository root): docker compose up -d postgres
// then: pnpm --filter express-postgres start
//   (DATABASE_URL defaults to postgres://postgres:postgres@127.0.0.1:5432/postgres)
// Start a second one with PORT=3001 and watch both draw from the same quota.
import pg from 'pg';
import { createApp } from './app.js';

const url = process.env.DATABASE_URL ?? 'postgres://postgres:postgres@127.0.0.1:5432/postgres';
// A pool of its own for the limiter: a few connections serve many requests (one short statement each).
const pool = new pg.Pool({ connectionString: url, max: 4 });
try {
  await pool.query('SELECT 1');
} catch (error) {
  const reason = error instanceof Error ? error.message : String(error);
  console.error(`Cannot reach PostgreSQL at ${url.replace(/\/\/[^@]*@/, '//')} (${reason}).`);
  console.error('Start one with `docker compose up -d postgres`, or set DATABASE_URL.');
  process.exit(1);
}
const port = Number(process.env.PORT ?? 3000);
createApp({ pool }).listen(port, '127.0.0.1', () => {
  console.log(`express-postgres on http://127.0.0.1:${port}`);
  console.log(`  curl -i http://127.0.0.1:${port}/`);
});
