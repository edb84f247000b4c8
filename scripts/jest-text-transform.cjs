// Lets tests import the Lua twins as strings, as tsup's text loader does in builds (the Lua as shipped).
const { textOf } = require('./lua-text.cjs');

module.exports = {
  process(source, filename) {
    const text = textOf(filename, source);
    return { code: `module.exports = ${JSON.stringify(text)}; module.exports.default = module.exports;` };
  },
};
