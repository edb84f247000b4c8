// Lets tests import the Lua twins as strings, as tsup's text loader does in builds.
module.exports = {
  process(source) {
    return { code: `module.exports = ${JSON.stringify(source)}; module.exports.default = module.exports;` };
  },
};
