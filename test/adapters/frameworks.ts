/**
 * Every framework the shared adapter suite runs on (test/adapters/*.test.ts), each from its package's
 * test folder, where its framework is installed. ./framework.ts says what each one serves.
 */
import { expressFrameworks } from '../../packages/express/test/framework.js';
import { fastifyFrameworks } from '../../packages/fastify/test/framework.js';
import { fetchFramework } from '../../packages/fetch/test/framework.js';
import { honoFrameworks } from '../../packages/hono/test/framework.js';
import { koaFrameworks } from '../../packages/koa/test/framework.js';
import { nest11 } from '../../packages/nestjs/test/nest11.js';
import type { Framework } from './framework.js';

export type { AppSettings, Framework, Running, SharedOptions } from './framework.js';

/** NestJS 10 runs the same suites in ./nest10.test.ts, where @sluice/nestjs gets Nest 10's @nestjs/common. */
export const frameworks: readonly Framework[] = [
  ...expressFrameworks,
  ...fastifyFrameworks,
  ...honoFrameworks,
  ...koaFrameworks,
  ...nest11,
  fetchFramework,
];

/** For `describe.each`: `[name, framework]` rows. */
export const eachFramework = frameworks.map((f) => [f.name, f] as const);
