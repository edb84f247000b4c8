/**
 * NestJS 10 from its own install (./nest10), for the shared adapter suite. Its packages resolve one
 * another there; the test that loads this makes @sluice/nestjs's `@nestjs/common` the same one.
 */
import 'reflect-metadata';
import { type Nest, nestFrameworks } from './framework.js';
import * as common from './nest10/node_modules/@nestjs/common';
import * as core from './nest10/node_modules/@nestjs/core';
import * as express from './nest10/node_modules/@nestjs/platform-express';
import * as fastify from './nest10/node_modules/@nestjs/platform-fastify';

export const nest10 = nestFrameworks({ major: 10, common, core, express, fastify } as unknown as Nest);
