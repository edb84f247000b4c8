/** NestJS 11, the version @sluice/nestjs develops against, for the shared adapter suite. */
import 'reflect-metadata';
import * as common from '@nestjs/common';
import * as core from '@nestjs/core';
import * as express from '@nestjs/platform-express';
import * as fastify from '@nestjs/platform-fastify';
import { nestFrameworks } from './framework.js';

export const nest11 = nestFrameworks({ major: 11, common, core, express, fastify });
