/** Express 5 and 4 for the shared adapter suite (test/adapters). */
import { createServer } from 'node:http';
import type { Decision } from '@sluice/core';
import { rateLimiter } from '@sluice/express';
import type { Express, NextFunction, Request, Response } from 'express';
import { control, type Framework, listening, slow, view } from '../../../test/adapters/framework.js';
import { expressVersions } from './support.js';

function onExpress(name: string, make: () => Express): Framework {
  return {
    name,
    header: (req, h) => (req as Request).get(h),
    answer: (body) => (req: Request, res: Response, d: Decision) => res.json(body(d, req.rateLimit)),
    async start(options, settings = {}) {
      const app = make();
      const c = control();
      if (settings.trustProxy) app.set('trust proxy', settings.trustProxy);
      const { timeoutMs } = settings;
      if (timeoutMs !== undefined)
        app.use((req, res, next) => {
          if (slow(req.headers))
            setTimeout(() => res.headersSent || res.status(503).send('timeout'), timeoutMs);
          next();
        });
      const { beforeMs } = settings;
      if (beforeMs !== undefined) app.use((_req, _res, next) => void setTimeout(next, beforeMs));
      const limiter = rateLimiter(options);
      app.use(limiter);
      if (settings.second !== undefined) app.use(rateLimiter(settings.second));
      app.get('/', (req, res) => {
        c.reached.push(Date.now());
        res.json(view(req.rateLimit));
      });
      for (const path of ['ok', 'fast']) app.get(`/${path}`, (_req, res) => void res.send(path));
      app.get('/fail', (_req, res) => void res.status(500).send('no'));
      app.post('/login', async (req, res) => {
        if (req.query.pw !== 'right') return void res.status(401).send('');
        if (!settings.resetOnLogin) return void res.send('');
        await limiter.reset(req);
        res.json({ subject: await limiter.subjectOf(req) });
      });
      app.get('/slow', (_req, res) => void c.gate.then(() => res.send('slow')));
      app.get('/hang', (_req, res) => void c.held.push((status) => res.status(status).send('late')));
      app.get('/work', (_req, res) => void c.work().then(() => res.status(500).send('failed')));
      app.use((error: Error, _req: Request, res: Response, _next: NextFunction) => {
        res.status(500).json({ error: error.message });
      });
      const server = createServer({ maxHeaderSize: settings.maxHeaderSize ?? 16384 }, app);
      server.listen(0, '127.0.0.1');
      return listening(server, c);
    },
  };
}

export const expressFrameworks: Framework[] = expressVersions.map(([name, make]) => onExpress(name, make));
