import { Bench } from 'tinybench';
import { summarize } from './stats.mjs';

/**
 * Operations per second of in-process tasks, in interleaved rounds (A B C … A B C …). Each tinybench
 * iteration runs `batch` operations, so the timer's own cost (tens of ns) does not swamp operations
 * that take about a hundred.
 *
 * @param tasks {Array<{ name: string, fn: () => unknown }>} each fn runs `batch` operations
 * @returns {Map<string, ReturnType<typeof summarize>>}
 */
export async function throughputRounds(tasks, { rounds, timeMs, warmupMs, batch, onRound }) {
  const perTask = new Map(tasks.map((t) => [t.name, []]));
  for (let round = 0; round < rounds; round++) {
    const bench = new Bench({ time: timeMs, warmupTime: warmupMs, iterations: 5, warmupIterations: 2 });
    for (const task of tasks) bench.add(task.name, task.fn);
    await bench.run();
    for (const task of bench.tasks) {
      const result = task.result;
      if (result.state !== 'completed') throw result.error ?? new Error(`${task.name}: ${result.state}`);
      // period: mean ms per iteration.
      perTask.get(task.name).push((batch * 1000) / result.period);
    }
    onRound?.(round);
  }
  return new Map([...perTask].map(([name, values]) => [name, summarize(values)]));
}
