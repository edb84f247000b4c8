import { randomBytes } from 'node:crypto';
import { createHttpHandler, type Decision, RedisStore } from '@sluice/core';
import { Redis } from 'ioredis';
import { encodeSubject } from '../../packages/core/src/keys.js';
import { fakeReader } from '../../packages/core/test/http/support.js';
import { expectOnlyWarnings } from '../support/warnings.js';
import { FRAMEWORKS, type Options } from './servers.js';

/**
 * What Sluice itself writes where people read (decisions handed to onDecision and put on the
 * request, response headers and problem+json bodies, process warnings, error messages) never holds
 * an API key or token it was given.
 */
const KEY = `sk_live_${randomBytes(12).toString('hex')}`;
const TOKEN = `tok_${randomBytes(12).toString('hex')}`;
const FORMS = [KEY, TOKEN, KEY.slice(8), TOKEN.slice(4), encodeSubject(KEY), encodeSubject(TOKEN)];

function leaked(text: string): string[] {
  return FORMS.filter((form) => text.includes(form));
}

const asKey = { 'x-api-key': KEY };
const asToken = { authorization: `Bearer ${TOKEN}` };

/** A Redis client that can never connect: every store call fails at once. */
function deadRedis(): Redis {
  return new Redis({
    port: 1,
    host: '127.0.0.1',
    lazyConnect: true,
    retryStrategy: () => null,
    maxRetriesPerRequest: 0,
  });
}

describe.each(FRAMEWORKS)('what $name shows of a credential', (framework) => {
  // Captured (the expected ones: a credential without verify, the store lost), and read for leaks.
  const warnings = expectOnlyWarnings('ERR_SLUICE_UNVERIFIED_CREDENTIAL', 'ERR_SLUICE_STORE_DEGRADED');

  it('nothing in decisions, headers, bodies or warnings, allowed, limited, banned and degraded', async () => {
    const decisions: Decision[] = [];
    const onDecision = (_req: unknown, decision: Decision) => {
      decisions.push(decision);
    };
    const dead = deadRedis();
    // The banning limiter first: its 429 strikes, then its 403 ban, are what a client sees.
    const limiters: Options[] = [
      {
        name: 'banning',
        limit: 1,
        window: '1m',
        subject: ['token', 'api-key'],
        ban: { after: 1, for: '1m' },
        onDecision,
        headers: 'draft-7',
      },
      {
        name: 'plain',
        limit: 2,
        window: '1m',
        subject: ['api-key', 'token'],
        onDecision,
        legacyHeaders: true,
      },
    ];
    const texts: string[] = [];
    for (const options of [
      limiters,
      [{ ...limiters[1], store: new RedisStore({ client: dead }), onStoreError: 'deny' }],
    ]) {
      const server = await framework.serve(options);
      try {
        for (const headers of [asKey, asToken, asKey, asToken, asKey, asToken]) {
          const answer = await server.get(headers);
          texts.push(`${answer.status} ${JSON.stringify(answer.headers)} ${answer.text}`);
        }
      } finally {
        await server.close();
      }
    }
    dead.disconnect();
    // Every kind of answer was seen, or the check proves less than it says.
    const statuses = new Set(texts.map((t) => Number(t.slice(0, 3))));
    expect([...statuses].sort()).toEqual([200, 403, 429, 503]);
    expect(decisions.length).toBeGreaterThan(6);
    expect(decisions.some((d) => d.degraded)).toBe(true);
    expect(leaked(JSON.stringify(decisions))).toEqual([]);
    expect(leaked(texts.join('\n'))).toEqual([]);
    expect(warnings.codes).toContain('ERR_SLUICE_STORE_DEGRADED'); // the scan below is not vacuous
    expect(leaked(warnings.messages.join('\n'))).toEqual([]);
  });
});

describe('error messages', () => {
  /** Options a credential could land in by mistake (the key itself where its header name belongs). */
  const misplaced: Array<[string, Record<string, unknown>]> = [
    ['apiKey given the key', { apiKey: KEY }],
    ['subject given the key', { subject: KEY }],
    ['subject list holding the token', { subject: ['ip', TOKEN] }],
    ['verify given the key', { verify: KEY }],
    ['allowList given the key alone', { allowList: KEY }],
    ['denyList given the token alone', { denyList: TOKEN }],
    ['limiter given the key', { limiter: KEY, limit: undefined, window: undefined }],
  ];

  it.each(misplaced)('%s: refused without echoing it', (_label, options) => {
    let message = '';
    try {
      createHttpHandler({ limit: 1, window: '1m', ...options } as never, fakeReader);
    } catch (error) {
      message = String((error as Error).message);
    }
    expect(message).not.toBe('');
    expect(leaked(message)).toEqual([]);
  });
});
