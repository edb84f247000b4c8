import { SluiceConfigError } from '@sluice/core';

/** The SluiceConfigError `make` throws, or undefined when it throws none; any other error is thrown on. */
export function configErrorOf(make: () => unknown): SluiceConfigError | undefined {
  try {
    make();
  } catch (error) {
    if (error instanceof SluiceConfigError) return error;
    throw error;
  }
  return undefined;
}

/** The SluiceConfigError `make` must throw. */
export function configError(make: () => unknown): SluiceConfigError {
  const error = configErrorOf(make);
  if (error === undefined) throw new Error('no SluiceConfigError was thrown');
  return error;
}
