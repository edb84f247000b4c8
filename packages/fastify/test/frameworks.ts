import fastify5 from 'fastify';
import fastify4 from 'fastify4';

/** Fastify 5 and Fastify 4 (the `fastify4` alias), typed alike so one suite runs on both. */
export type MakeApp = typeof fastify5;

export const frameworks: [string, MakeApp][] = [
  ['Fastify 5', fastify5],
  ['Fastify 4', fastify4 as unknown as MakeApp],
];
