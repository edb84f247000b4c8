import { spawn } from 'node:child_process';
import { join } from 'node:path';

const ROOT = join(__dirname, '../../../..');

export interface ScenarioRun<T> {
  result: T;
  stderr: string;
}

/**
 * Runs a cluster scenario (child/main.ts) in a process of its own: Jest's worker cannot be a cluster
 * primary. The primary runs the TypeScript sources through the chaos suite's module hooks, as its
 * workers do, and prints one `RESULT <json>` line.
 */
export function runScenario<T>(scenario: string, timeoutMs = 60_000): Promise<ScenarioRun<T>> {
  const child = spawn(
    process.execPath,
    ['--import', join(ROOT, 'test/chaos/register.mjs'), join(__dirname, 'child/main.ts')],
    { cwd: ROOT, env: { ...process.env, SCENARIO: scenario }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk) => {
    stdout += chunk;
  });
  child.stderr!.on('data', (chunk) => {
    stderr += chunk;
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${scenario}: no result within ${timeoutMs} ms\n${stdout}\n${stderr}`));
    }, timeoutMs);
    child.once('exit', (code) => {
      clearTimeout(timer);
      const line = stdout.split('\n').find((l) => l.startsWith('RESULT '));
      if (line === undefined)
        return reject(new Error(`${scenario}: exited (${code}) with no result\n${stderr}`));
      resolve({ result: JSON.parse(line.slice('RESULT '.length)) as T, stderr });
    });
  });
}
