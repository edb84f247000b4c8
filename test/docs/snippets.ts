import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** The root of the repository. */
export const ROOT = join(__dirname, '..', '..');

export interface Snippet {
  /** Where it stands: `README.md:42`. */
  readonly where: string;
  readonly language: 'js' | 'ts';
  readonly code: string;
}

/**
 * What a snippet that continues another may take as given, named by a comment on the line before its
 * fence: `<!-- snippet: express-app -->`.
 */
const PRELUDES: Record<string, string> = {
  'express-app':
    "import express from 'express';\nimport { rateLimiter } from '@sluice/express';\nconst app = express();\n",
  fastify: "import Fastify from 'fastify';\n",
  'redis-client': "import { Redis } from 'ioredis';\nconst log = { warn: console.warn };\n",
};

/** Every fenced JavaScript or TypeScript block of README.md, docs/*.md and the packages' READMEs (in their tarballs). */
export function snippets(): Snippet[] {
  const files = [
    'README.md',
    ...readdirSync(join(ROOT, 'docs'))
      .filter((f) => f.endsWith('.md'))
      .map((f) => `docs/${f}`),
    ...readdirSync(join(ROOT, 'packages'))
      .map((p) => `packages/${p}/README.md`)
      .filter((f) => existsSync(join(ROOT, f))),
  ];
  const found: Snippet[] = [];
  for (const file of files) {
    const lines = readFileSync(join(ROOT, file), 'utf8').split('\n');
    for (let i = 0; i < lines.length; i++) {
      const open = /^```(js|javascript|ts|typescript)\s*$/.exec(lines[i]!);
      if (open === null) continue;
      const start = i + 1;
      let end = start;
      while (end < lines.length && lines[end] !== '```') end++;
      const language = open[1]!.startsWith('t') ? 'ts' : 'js';
      const context = /^<!-- snippet: ([a-z-]+) -->$/.exec(lines[i - 1] ?? '')?.[1];
      const prelude = context === undefined ? '' : PRELUDES[context];
      if (prelude === undefined) throw new Error(`${file}:${start}: no snippet context named ${context}`);
      found.push({ where: `${file}:${start}`, language, code: prelude + lines.slice(start, end).join('\n') });
      i = end;
    }
  }
  return found;
}

/**
 * Writes each snippet as a module of its own into `dir` (JavaScript as .mjs, checked as JS) with a
 * tsconfig that resolves `@sluice/*` to the sources and the frameworks to the adapters' own installs.
 */
export function writeProject(dir: string, all: readonly Snippet[]): string[] {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const names = all.map((s, i) => {
    const name = `${String(i).padStart(2, '0')}-${s.where.replace(/[^a-z0-9]+/gi, '-')}.${s.language === 'ts' ? 'ts' : 'mjs'}`;
    // Every snippet is a module (its own scope), whether or not it imports anything.
    writeFileSync(join(dir, name), `${s.code}\nexport {};\n`);
    return name;
  });
  const at = (p: string) => join(ROOT, p);
  // Snippets of the other libraries (docs/migrating.md's "before") compile apart: @fastify/rate-limit
  // declares its own `rateLimit` on Fastify instances, which a Sluice app never sees beside it.
  const peer = (i: number) => PEERS.test(all[i]!.code);
  const project = (file: string, files: string[]) =>
    writeFileSync(join(dir, file), JSON.stringify(config(files)));
  project(
    'tsconfig.json',
    names.filter((_, i) => !peer(i)),
  );
  project(
    'tsconfig.peers.json',
    names.filter((_, i) => peer(i)),
  );
  return names;

  function config(files: string[]) {
    return {
      compilerOptions: {
        target: 'ES2022',
        module: 'ESNext',
        moduleResolution: 'Bundler',
        strict: true,
        // Nest's decorators (the NestJS snippets) are TypeScript's legacy ones.
        experimentalDecorators: true,
        allowJs: true,
        checkJs: true,
        noEmit: true,
        skipLibCheck: true,
        esModuleInterop: true,
        types: ['node'],
        typeRoots: [at('node_modules/@types')],
        baseUrl: ROOT,
        paths: {
          '@sluice/core': ['packages/core/src/index.ts'],
          '@sluice/core/otel': ['packages/core/src/otel/index.ts'],
          '@sluice/core/testing': ['packages/core/src/testing/index.ts'],
          '@sluice/express': ['packages/express/src/index.ts'],
          '@sluice/fastify': ['packages/fastify/src/index.ts'],
          '@sluice/fetch': ['packages/fetch/src/index.ts'],
          '@sluice/hono': ['packages/hono/src/index.ts'],
          '@sluice/koa': ['packages/koa/src/index.ts'],
          '@sluice/nestjs': ['packages/nestjs/src/index.ts'],
          koa: ['packages/koa/node_modules/@types/koa'],
          express: ['packages/express/node_modules/@types/express'],
          fastify: ['packages/fastify/node_modules/fastify'],
          // pg ships no types of its own: '*' below would find its JavaScript before @types/pg.
          pg: ['node_modules/@types/pg'],
          // The other libraries, for docs/migrating.md's "before" snippets: the benchmark installs them.
          '*': [
            'node_modules/*',
            'node_modules/@types/*',
            'packages/express/node_modules/*',
            'packages/fastify/node_modules/*',
            'packages/hono/node_modules/*',
            'packages/koa/node_modules/*',
            'packages/koa/node_modules/@types/*',
            'packages/nestjs/node_modules/*',
            'bench/node_modules/*',
          ],
        },
      },
      // The sources' own ambient declarations (the Lua and SQL twins imported as text).
      files: [...files, at('types/lua.d.ts'), at('types/sql.d.ts')],
    };
  }
}

/** A snippet of another library's API. */
const PEERS =
  /from '(express-rate-limit|@fastify\/rate-limit|rate-limiter-flexible|rate-limit-redis|@nestjs\/throttler)'/;
