// The packages loaded through import: the ESM builds and the "import" conditions.
import { createRequire } from 'node:module';
import exerciseModule from './exercise.cjs';

/** A module that fails to load becomes a failed check of its own, so the other checks still run. */
async function load(name) {
  try {
    return await import(name);
  } catch (error) {
    console.log(`not ok - import('${name}')\n#   ${error.message.split('\n')[0]}`);
    process.exitCode = 1;
    return {};
  }
}

const version = (name) => createRequire(import.meta.url)(`${name}/package.json`).version;

const failures = await exerciseModule.exercise({
  core: await load('@sluice/core'),
  testing: await load('@sluice/core/testing'),
  sluiceExpress: await load('@sluice/express'),
  sluiceFastify: (await load('@sluice/fastify')).default,
  express: (await load('express')).default,
  expressVersion: version('express'),
  fastify: (await load('fastify')).default,
  fastifyVersion: version('fastify'),
  sluiceFetch: await load('@sluice/fetch'),
  sluiceHono: await load('@sluice/hono'),
  Hono: (await load('hono')).Hono,
  honoVersion: exerciseModule.versionOf(createRequire(import.meta.url), 'hono'),
  serve: (await load('@hono/node-server')).serve,
  sluiceKoa: await load('@sluice/koa'),
  Koa: (await load('koa')).default,
  koaVersion: exerciseModule.versionOf(createRequire(import.meta.url), 'koa'),
  reflect: await load('reflect-metadata'),
  sluiceNest: await load('@sluice/nestjs'),
  // Nest is CommonJS: its module.exports, whatever names Node's ESM loader could find in it.
  nestCommon: (await load('@nestjs/common')).default,
  nestCore: (await load('@nestjs/core')).default,
  nestVersion: exerciseModule.versionOf(createRequire(import.meta.url), '@nestjs/core'),
  // The default import is module.exports: the client class in every ioredis 5 and 6.
  Redis: (await load('ioredis')).default,
  ioredisVersion: version('ioredis'),
});
if (failures > 0) process.exitCode = 1;
