import { Bench } from 'tinybench';

/**
 * Operations per second of one in-process task. Each tinybench iteration runs `batch` operations,
 * so the timer's own cost (tens of ns) does not swamp operations that take about a hundred.
 *
 * @param fn {() => unknown} runs `batch` operations (may be async)
 */
export async function throughput(name, fn, { timeMs, warmupMs, batch }) {
  const bench = new Bench({ time: timeMs, warmupTime: warmupMs, iterations: 5, warmupIterations: 2 });
  bench.add(name, fn);
  await bench.run();
  const { result } = bench.tasks[0];
  if (result.state !== 'completed') throw result.error ?? new Error(`${name}: ${result.state}`);
  // period: mean ms per iteration.
  return (batch * 1000) / result.period;
}
