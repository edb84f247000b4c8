/**
 * The shared adapter suites on NestJS 10, on Express and on Fastify. Nest 10 has an install of its own
 * (packages/nestjs/test/nest10), and here every `@nestjs/common` is that one, @sluice/nestjs's
 * included: a Nest app has one, and its exception layer knows only its own HttpException.
 */
import { nest10 } from '../../packages/nestjs/test/nest10.js';
import { answers } from './suites/answers.js';
import { headerStrings } from './suites/headers.js';
import { lifecycle } from './suites/lifecycle.js';
import { optionsPerRequest } from './suites/options.js';
import { subjects } from './suites/subjects.js';
import { proxyWarnings } from './suites/warnings.js';

jest.mock('@nestjs/common', () =>
  jest.requireActual('../../packages/nestjs/test/nest10/node_modules/@nestjs/common'),
);

const rows = nest10.map((f) => [f.name, f] as const);
describe.each(rows)('%s: answers', (_, framework) => answers(framework));
describe.each(rows)('%s: header strings from the shared table', (_, framework) => headerStrings(framework));
describe.each(rows)('%s: holding, releasing, late decisions', (_, framework) => lifecycle(framework));
describe.each(rows)('%s: options per request', (_, framework) => optionsPerRequest(framework));
describe.each(rows)('%s: who is limited', (_, framework) => subjects(framework));
describe.each(rows)('%s: the proxy warnings', (_, framework) => proxyWarnings(framework));

test("@sluice/nestjs throws Nest 10's HttpException here, as Nest 10's exception layer knows", () => {
  const { RateLimitException } = jest.requireActual<typeof import('@sluice/nestjs')>('@sluice/nestjs');
  const common10 = jest.requireActual<
    typeof import('../../packages/nestjs/test/nest10/node_modules/@nestjs/common')
  >('../../packages/nestjs/test/nest10/node_modules/@nestjs/common');
  expect(new RateLimitException(429, undefined)).toBeInstanceOf(common10.HttpException);
});
