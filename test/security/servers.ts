import type { AddressInfo } from 'node:net';
import type { Decision } from '@sluice/core';
import { rateLimiter } from '@sluice/express';
import { sluice } from '@sluice/fastify';
import request from 'supertest';
import { errorsAsJson, expressVersions } from '../../packages/express/test/support.js';
import { frameworks } from '../../packages/fastify/test/frameworks.js';

/**
 * The four frameworks (Express 4 and 5, Fastify 4 and 5) behind one shape, over real HTTP on
 * 127.0.0.1, so every attack runs against each. An app is a stack of limiters (one rateLimiter() or
 * plugin registration per options object) in front of `GET /`, which answers with the decision of
 * the last limiter.
 */
export type Options = Record<string, unknown>;
/** Express `trust proxy` / Fastify `trustProxy`: false, true, or the trusted addresses and ranges. */
export type Trust = boolean | string[];

export interface Answer {
  status: number;
  headers: Record<string, string>;
  text: string;
}

export interface Server {
  get(headers?: Record<string, string>): Promise<Answer>;
  close(): Promise<void>;
}

export interface Framework {
  readonly name: string;
  serve(limiters: Options[], trust?: Trust): Promise<Server>;
}

type Reply = { rateLimit?: Decision };

const express: Framework[] = expressVersions.map(([name, makeApp]) => ({
  name,
  async serve(limiters, trust = false) {
    const app = makeApp();
    app.set('trust proxy', trust);
    for (const options of limiters) app.use(rateLimiter(options as never));
    app.get('/', (req, res) => {
      res.json({ remaining: (req as Reply).rateLimit?.remaining });
    });
    errorsAsJson(app);
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    return {
      get: (headers = {}) => answer(request(url).get('/').set(headers)),
      close: () =>
        new Promise<void>((resolve) => {
          server.closeAllConnections();
          server.close(() => resolve());
        }),
    };
  },
}));

const fastify: Framework[] = frameworks.map(([name, makeApp]) => ({
  name,
  async serve(limiters, trust = false) {
    const app = makeApp({ trustProxy: Array.isArray(trust) ? trust.join(',') : trust });
    for (const options of limiters) await app.register(sluice, options as never);
    app.get('/', async (req) => ({ remaining: (req as Reply).rateLimit?.remaining }));
    await app.listen({ host: '127.0.0.1', port: 0 });
    const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    return {
      get: (headers = {}) => answer(request(url).get('/').set(headers)),
      close: () => app.close(),
    };
  },
}));

async function answer(pending: request.Test): Promise<Answer> {
  const res = await pending;
  return { status: res.status, headers: res.headers as Record<string, string>, text: res.text };
}

export const FRAMEWORKS: readonly Framework[] = [...express, ...fastify];

/** The statuses of requests sent one after the other. */
export async function statuses(server: Server, requests: Array<Record<string, string>>): Promise<number[]> {
  const out: number[] = [];
  for (const headers of requests) out.push((await server.get(headers)).status);
  return out;
}
