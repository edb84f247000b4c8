import { rateLimiter } from '@sluice/express';
import express from 'express';

/**
 * What ten wrong passwords in a row get, as server.js prints it (the test checks it): five failures,
 * three refusals (each one a strike), then the ban.
 */
export const TEN_FAILURES = [401, 401, 401, 401, 401, 429, 429, 429, 403, 403];

/** Stand-in for your user store. */
const PASSWORDS = new Map([['ada', 'correct horse battery staple']]);

/**
 * POST /login: 5 failed attempts per minute per IP, counted exactly (sliding log); successful logins
 * are given back (skipSuccessfulRequests). A client denied 3 times within that minute is banned:
 * answered 403 for 15 minutes, whatever it sends.
 */
export function createApp() {
  const app = express();
  // Behind a proxy, req.ip must be the client's address or every client shares one limit (by address,
  // never a hop count, which a client that connects directly defeats):
  // app.set('trust proxy', 'loopback, linklocal, uniquelocal');
  app.use(express.json());

  const loginLimit = rateLimiter({
    name: 'login',
    limit: 5,
    window: '1m',
    algorithm: 'sliding-log',
    skipSuccessfulRequests: true,
    ban: { after: 3, for: '15m' },
  });

  app.post('/login', loginLimit, (req, res) => {
    const { user, password } = req.body ?? {};
    if (PASSWORDS.get(user) === password) res.json({ welcome: user });
    else res.status(401).json({ error: 'wrong user or password' });
  });
  return app;
}
