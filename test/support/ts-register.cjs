// Lets a plain Node child process (`node test/support/ts-register.cjs child.ts ...args`, or
// `child_process.fork` of this file with the child's path first) run the TypeScript sources as Jest does: .ts compiled by SWC to CommonJS, .lua and .sql imported as text, `.js`
// import suffixes resolved to the .ts files, and @sluice/* to the package sources.
const Module = require('node:module');
const fs = require('node:fs');
const path = require('node:path');
const { transformSync } = require('@swc/core');
const { textOf } = require('../../scripts/lua-text.cjs');

const root = path.resolve(__dirname, '../..');
const aliases = {
  '@sluice/core': path.join(root, 'packages/core/src/index.ts'),
  '@sluice/core/testing': path.join(root, 'packages/core/src/testing/index.ts'),
};

const resolve = Module._resolveFilename;
Module._resolveFilename = function resolveTs(request, parent, ...rest) {
  if (aliases[request]) return aliases[request];
  if (request.startsWith('.') && request.endsWith('.js') && parent?.filename) {
    const ts = path.resolve(path.dirname(parent.filename), `${request.slice(0, -3)}.ts`);
    if (fs.existsSync(ts)) return ts;
  }
  return resolve.call(this, request, parent, ...rest);
};

Module._extensions['.ts'] = (module, filename) => {
  const { code } = transformSync(fs.readFileSync(filename, 'utf8'), {
    filename,
    jsc: { target: 'es2022', parser: { syntax: 'typescript' } },
    module: { type: 'commonjs' },
  });
  module._compile(code, filename);
};

// Lua and SQL twins: a string, which SWC's import interop turns into the default export.
Module._extensions['.lua'] = Module._extensions['.sql'] = (module, filename) => {
  module.exports = textOf(filename, fs.readFileSync(filename, 'utf8'));
};

// Run as a launcher: the module named first runs as the child's main module.
if (require.main === module) {
  const main = path.resolve(process.argv[2]);
  process.argv.splice(1, 2, main);
  require(main);
}
