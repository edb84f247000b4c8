import { runInThisContext } from 'node:vm';

/**
 * Records every unhandled rejection of the process while this file's tests run. Jest hands tests a
 * copy of `process` whose listeners never fire, so the listener goes on the real one; it is added in
 * beforeAll because Jest replaces the real process's listeners when its run starts.
 */
export function watchUnhandledRejections(): unknown[] {
  const real = runInThisContext('process') as NodeJS.Process;
  const seen: unknown[] = [];
  const listener = (reason: unknown) => {
    seen.push(reason);
  };
  beforeAll(() => {
    real.on('unhandledRejection', listener);
  });
  afterAll(() => {
    real.off('unhandledRejection', listener);
  });
  return seen;
}

/** The state of a promise, readable without awaiting it. */
export function track<T>(promise: Promise<T>): { settled: boolean; value?: T; error?: unknown } {
  const state: { settled: boolean; value?: T; error?: unknown } = { settled: false };
  promise.then(
    (value) => {
      state.settled = true;
      state.value = value;
    },
    (error: unknown) => {
      state.settled = true;
      state.error = error;
    },
  );
  return state;
}
