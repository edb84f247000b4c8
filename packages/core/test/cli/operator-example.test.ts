import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * docs/operator.md's sluice.config.mjs, as an app runs it: its options made into a handler warned
 * ERR_SLUICE_UNVERIFIED_CREDENTIAL (api-key without verify; newcomer review, #28). Run in a child
 * process on the built @sluice/core, as the module is written (ESM, resolved from packages/core).
 */
const CORE = join(__dirname, '../..');
jest.setTimeout(60_000);

function example(): string {
  const doc = readFileSync(join(CORE, '../../docs/operator.md'), 'utf8');
  const block = /```js\n(\/\/ sluice\.config\.mjs[\s\S]*?)```/.exec(doc);
  if (block === null) throw new Error('docs/operator.md: no sluice.config.mjs example');
  return block[1]!;
}

const RUNNER = `
const warnings = [];
process.on('warning', (w) => { if (w.name === 'SluiceWarning') warnings.push(w.code); });
const { createHttpHandler, frameworkReader } = await import('@sluice/core');
const { default: options } = await import('./sluice.config.mjs');
createHttpHandler(options, frameworkReader);
await new Promise((resolve) => setTimeout(resolve, 100));
process.stdout.write(JSON.stringify(warnings));
process.exit(0);
`;

test("docs/operator.md's example config makes a handler with no SluiceWarning", async () => {
  // Inside packages/core, so that '@sluice/core' and 'ioredis' resolve as in an app beside them.
  const dir = mkdtempSync(join(CORE, 'test/cli/.operator-example-'));
  try {
    writeFileSync(join(dir, 'sluice.config.mjs'), example());
    writeFileSync(join(dir, 'run.mjs'), RUNNER);
    const stdout = await new Promise<string>((resolve, reject) =>
      execFile(
        process.execPath,
        [join(dir, 'run.mjs')],
        // No server needed: the client is made, never used, and the process ends first.
        { env: { ...process.env, REDIS_URL: 'redis://127.0.0.1:1' }, timeout: 20_000 },
        (error, out, err) => (error === null ? resolve(out) : reject(new Error(`${error.message}\n${err}`))),
      ),
    );
    expect(JSON.parse(stdout)).toEqual([]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
