// pnpm demo: builds the packages, then runs this. No Redis, no configuration; exits 0.
import { runDemo } from './run.js';
import { SCENARIOS } from './scenarios.js';

try {
  await runDemo({
    write: (text) => process.stdout.write(text),
    color: process.stdout.isTTY,
    scenarios: SCENARIOS,
  });
  process.exit(0);
} catch (error) {
  console.error('The demo failed:', error);
  process.exit(1);
}
