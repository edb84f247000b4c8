// `node --import ./test/chaos/register.mjs server.mjs`: run the TypeScript sources directly (ts-hooks.mjs).
import { register } from 'node:module';

register('./ts-hooks.mjs', import.meta.url);
