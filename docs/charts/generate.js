// pnpm docs:charts — builds the packages, then draws every chart from the built @sluice/core.
// `node docs/charts/generate.js --check` fails when a committed chart differs from what the code draws.
import { readFile, writeFile } from 'node:fs/promises';
import { buildCharts } from './charts.js';

const core = await import(new URL('../../packages/core/dist/index.js', import.meta.url).href).catch(() => {
  console.error('docs/charts: @sluice/core is not built. Run: pnpm docs:charts (it builds first)');
  process.exit(1);
});
const check = process.argv.includes('--check');
const stale = [];
for (const [name, svg] of await buildCharts(core)) {
  const path = new URL(name, import.meta.url);
  if (check) {
    const committed = await readFile(path, 'utf8').catch(() => '');
    if (committed !== svg) stale.push(name);
  } else {
    await writeFile(path, svg);
    console.log(`docs/charts/${name}`);
  }
}
if (stale.length > 0) {
  console.error(`Charts out of date: ${stale.join(', ')}. Run: pnpm docs:charts`);
  process.exitCode = 1;
}
