import { countedWarnings } from '../../src/cli/counted-check.js';
import { STORE_KINDS } from '../../src/cli/stores.js';

// Review 28: NOTHING_COUNTED under limiter flags said "its --prefix, --name or --policies differ",
// where most operators pass --limit, --window and --algorithm, and named nothing of --store (a Redis
// database number, a PostgreSQL database or table). Failed on ae2676c (no --algorithm, no ?table=).
describe('NOTHING_COUNTED under limiter flags names the flags an operator passes, per kind of store', () => {
  const kind = (scheme: string) => STORE_KINDS.find((k) => k.schemes.includes(scheme))!;

  test.each([
    ['redis:', "--store is not the app's server and database (redis://host:6379/db"],
    ['redis-cluster:', "--store is not the app's cluster"],
    ['postgres:', "?table= not its PostgresStore's table (default sluice_limits)"],
  ])('%s', (scheme, store) => {
    const [warning] = countedWarnings(false, 'flags', { store: kind(scheme).elsewhere });
    expect(warning?.code).toBe('NOTHING_COUNTED');
    for (const flag of ['--name', '--prefix', '--limit', '--window', '--algorithm', '--burst', '--policies'])
      expect(warning?.message).toContain(flag);
    expect(warning?.message).toContain(store);
  });

  test("a module of the app's options is its keys: no warning", () => {
    expect(countedWarnings(false, 'module', { store: kind('redis:').elsewhere })).toEqual([]);
  });
});
