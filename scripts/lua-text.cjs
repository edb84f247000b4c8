/**
 * The Lua twins and the Redis script as shipped: comments, indentation and blank lines left out, the
 * code itself untouched (strings, short or long, are copied as written). What every loader of `.lua`
 * files uses (tsup's build, Jest, the test hooks, the edge bundles), so the tests run the script a
 * user's Redis runs; an edge bundle carries the Lua of all seven algorithms (a policy names its
 * algorithm by a string, so none can be left out), and this is most of what can be saved there.
 */
'use strict';

const { readFile } = require('node:fs/promises');

/** The level of a long bracket `[[`, `[=[`, … opening at `i` (its `=` count), or -1. */
function longBracket(source, i) {
  if (source[i] !== '[') return -1;
  let j = i + 1;
  while (source[j] === '=') j++;
  return source[j] === '[' ? j - i - 1 : -1;
}

/** Where the long bracket of `level` that opened before `from` closes (after its last `]`). */
function closeOf(source, from, level) {
  const close = `]${'='.repeat(level)}]`;
  const end = source.indexOf(close, from);
  if (end < 0) throw new Error('lua-text: unfinished long bracket');
  return end + close.length;
}

/** `source` without its comments; the code, strings included, as written. */
function withoutComments(source) {
  let out = '';
  let i = 0;
  while (i < source.length) {
    const c = source[i];
    if (c === '-' && source[i + 1] === '-') {
      const level = longBracket(source, i + 2);
      if (level >= 0) i = closeOf(source, i + 4 + level, level);
      else {
        const eol = source.indexOf('\n', i);
        i = eol < 0 ? source.length : eol;
      }
      continue;
    }
    let end = i + 1;
    if (c === "'" || c === '"') {
      while (end < source.length && source[end] !== c) {
        if (source[end] === '\n') throw new Error('lua-text: unfinished string');
        end += source[end] === '\\' ? 2 : 1;
      }
      end++;
    } else {
      const level = longBracket(source, i);
      if (level >= 0) {
        end = closeOf(source, i + 2 + level, level);
        // Its lines are kept as written only if it has one: luaText trims every line.
        if (source.slice(i, end).includes('\n'))
          throw new Error('lua-text: a long string over several lines');
      }
    }
    out += source.slice(i, end);
    i = end;
  }
  return out;
}

/** The Lua `source` as shipped: no comment, no indentation, no trailing space, no blank line. */
function luaText(source) {
  return withoutComments(source)
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '')
    .join('\n');
}

/** A file's text as the loaders give it: Lua as shipped, anything else (SQL) as written. */
function textOf(filename, source) {
  return filename.endsWith('.lua') ? luaText(source) : source;
}

/** An esbuild plugin that loads `.lua` files as text, as shipped (tsup's build, the edge bundles of the tests). */
const luaPlugin = {
  name: 'lua-text',
  setup(build) {
    build.onLoad({ filter: /\.lua$/ }, async (args) => ({
      contents: luaText(await readFile(args.path, 'utf8')),
      loader: 'text',
    }));
  },
};

module.exports = { luaPlugin, luaText, textOf };
