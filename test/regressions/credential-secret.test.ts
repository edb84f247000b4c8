import { createHash, createHmac } from 'node:crypto';
import { ErrorCodes, MemoryStore, SluiceConfigError, type Store } from '@sluice/core';
import { rateLimiter } from '@sluice/express';
import { eachFramework } from '../adapters/frameworks.js';
import { get, serving } from '../adapters/support.js';
import { recording } from '../fixtures/stores.js';
import { expectOnlyWarnings } from '../support/warnings.js';

// Credentials without verify are what these cases send: the warning is expected, captured.
expectOnlyWarnings('ERR_SLUICE_UNVERIFIED_CREDENTIAL');

// API keys and tokens were hashed with plain SHA-256, so whoever could read Redis could test guessed
// keys against its key names. `credentialSecret` (API.md r2) makes it HMAC-SHA-256. Failed on 13f5928
// (on Express then; on every framework of the shared suite now).
describe.each(eachFramework)('%s: credentialSecret', (_name, framework) => {
  const start = serving(framework);
  async function subjectOf(options: object): Promise<string> {
    const store = recording(new MemoryStore());
    const app = await start({
      limit: 5,
      window: '1m',
      subject: 'api-key',
      store: store as Store,
      ...options,
    });
    await get(app, '/ok', { 'x-api-key': 'sk_live_guessable' });
    return [...store.subjects][0]!;
  }

  it('hashes credentials with HMAC-SHA-256 under the secret', async () => {
    const hmac = createHmac('sha256', 'pepper').update('sk_live_guessable').digest('base64url');
    const plain = createHash('sha256').update('sk_live_guessable').digest('base64url');
    const keyed = await subjectOf({ credentialSecret: 'pepper' });
    expect(keyed).toContain(hmac);
    expect(keyed).not.toContain(plain);
    expect(await subjectOf({ credentialSecret: Buffer.from('pepper') })).toBe(keyed);
    expect(await subjectOf({})).toContain(plain);
  });
});

describe('credentialSecret, checked at construction', () => {
  it('refuses an empty secret, without showing it', () => {
    for (const credentialSecret of ['', Buffer.alloc(0), 42]) {
      const make = () => rateLimiter({ limit: 1, window: '1m', credentialSecret } as never);
      expect(make).toThrow(SluiceConfigError);
      expect(make).toThrow(
        expect.objectContaining({ code: ErrorCodes.INVALID_OPTION, option: 'credentialSecret' }),
      );
    }
  });
});
