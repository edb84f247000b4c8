// `node --import ./test/support/ts-esm-register.mjs app.ts`: runs an ES module (a README quick start
// with top-level await) on the TypeScript sources, as Jest does (test/support/ts-esm-hooks.mjs).
import { register } from 'node:module';

register('./ts-esm-hooks.mjs', import.meta.url);
