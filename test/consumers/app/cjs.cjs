// The packages loaded through require(): the CommonJS builds and the "require" conditions.
const { exercise, versionOf } = require('./exercise.cjs');

/** A module that fails to load becomes a failed check of its own, so the other checks still run. */
function load(name) {
  try {
    return require(name);
  } catch (error) {
    console.log(`not ok - require('${name}')\n#   ${error.message.split('\n')[0]}`);
    process.exitCode = 1;
    return {};
  }
}

exercise({
  core: load('@sluice/core'),
  testing: load('@sluice/core/testing'),
  sluiceExpress: load('@sluice/express'),
  sluiceFastify: load('@sluice/fastify').sluice,
  express: load('express'),
  expressVersion: load('express/package.json').version,
  fastify: load('fastify'),
  fastifyVersion: load('fastify/package.json').version,
  sluiceFetch: load('@sluice/fetch'),
  sluiceHono: load('@sluice/hono'),
  Hono: load('hono').Hono,
  honoVersion: versionOf(require, 'hono'),
  serve: load('@hono/node-server').serve,
  sluiceKoa: load('@sluice/koa'),
  Koa: load('koa'),
  koaVersion: versionOf(require, 'koa'),
  reflect: load('reflect-metadata'),
  sluiceNest: load('@sluice/nestjs'),
  nestCommon: load('@nestjs/common'),
  nestCore: load('@nestjs/core'),
  nestVersion: versionOf(require, '@nestjs/core'),
  // module.exports is the client class in every ioredis 5 and 6; the named export came later.
  Redis: load('ioredis'),
  ioredisVersion: load('ioredis/package.json').version,
}).then((failures) => {
  if (failures > 0) process.exitCode = 1;
});
