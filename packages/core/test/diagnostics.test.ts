import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { createLimiter, DiagnosticChannels, MemoryStore, type Store } from '@sluice/core';
import { manualClock } from '@sluice/core/testing';
import { safeMessage } from '../src/diagnostics.js';
import { ControlledStore } from './failure/controlled-store.js';

/** Collects the messages of `channel` while `run` runs. */
async function heard(channel: string, run: () => Promise<unknown>): Promise<unknown[]> {
  const messages: unknown[] = [];
  const listen = (message: unknown) => void messages.push(message);
  subscribe(channel, listen);
  try {
    await run();
  } finally {
    unsubscribe(channel, listen);
  }
  return messages;
}

describe('diagnostics channels', () => {
  it('sluice:decision carries every consume, never a peek, and never the subject', async () => {
    const limiter = createLimiter({ name: 'api', limit: 1, window: '1m', store: new MemoryStore() });
    const messages = await heard(DiagnosticChannels.decision, async () => {
      await limiter.consume('user-secret-42');
      await limiter.peek('user-secret-42');
      await limiter.consume('user-secret-42');
    });
    expect(messages).toEqual([
      {
        limiter: 'api',
        policy: '1-per-1m',
        allowed: true,
        reason: undefined,
        remaining: 0,
        retryAfterMs: 0,
        degraded: false,
        storeMs: undefined,
      },
      expect.objectContaining({ limiter: 'api', allowed: false, reason: 'limit', degraded: false }),
    ]);
    expect(JSON.stringify(messages)).not.toContain('user-secret-42');
  });

  it('a remote store: decisions carry the store latency; failures, the circuit and degraded decisions are heard', async () => {
    const store = new ControlledStore(manualClock());
    const limiter = createLimiter({ name: 'api', limit: 5, window: '1m', store: store as Store });
    const warn = jest.spyOn(process, 'emitWarning').mockImplementation(() => {});
    const decisions = await heard(DiagnosticChannels.decision, async () => {
      const errors = await heard(DiagnosticChannels.storeError, async () => {
        const circuit = await heard(DiagnosticChannels.circuit, async () => {
          await limiter.consume('a');
          store.health = 'reject';
          for (let i = 0; i < 6; i++) await limiter.consume('a');
          store.health = 'up';
          store.clock.advance(1000);
          await limiter.consume('a');
        });
        expect(circuit).toEqual([
          { limiter: 'api', state: 'open' },
          { limiter: 'api', state: 'half-open' },
          { limiter: 'api', state: 'closed' },
        ]);
      });
      expect(errors).toHaveLength(5);
      expect(errors[0]).toEqual({
        limiter: 'api',
        store: 'ControlledStore',
        timeout: false,
        error: 'store down',
      });
    });
    expect(decisions[0]).toMatchObject({ allowed: true, degraded: false, storeMs: 0 });
    expect(decisions.filter((d) => (d as { degraded: boolean }).degraded)).toHaveLength(6);
    const codes = warn.mock.calls.map(([, o]) => (o as { code?: string }).code);
    expect(codes).toEqual(['ERR_SLUICE_STORE_DEGRADED', 'ERR_SLUICE_STORE_RECOVERED']);
    warn.mockRestore();
  });

  it('store errors never show a credential of a connection string', () => {
    expect(safeMessage(new Error('connect to redis://admin:hunter2@10.0.0.1:6379 failed'))).toBe(
      'connect to redis://10.0.0.1:6379 failed',
    );
  });
});
