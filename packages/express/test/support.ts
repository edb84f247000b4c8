import type { Express, NextFunction, Request, Response, Router } from 'express';
import express5 from 'express';
import express4 from 'express4';

/** Both major versions of Express: every suite runs on each. */
export const expressVersions: ReadonlyArray<readonly [string, () => Express, () => Router]> = [
  ['Express 5', () => express5(), () => express5.Router()],
  [
    'Express 4',
    () => (express4 as unknown as () => Express)(),
    () => (express4 as unknown as typeof express5).Router(),
  ],
];

/** Answers every error as JSON 500 with its message, so a test sees what reached next(err). */
export function errorsAsJson(app: Express): void {
  app.use((error: Error, _req: Request, res: Response, _next: NextFunction) => {
    res.status(500).json({ error: error.message });
  });
}

/** Resolves after the event loop has had a turn (refunds and strikes landing). */
export function tick(ms = 0): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
