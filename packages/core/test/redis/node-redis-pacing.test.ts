import { nodeRedisRunner } from '../../src/stores/redis/clients/node-redis.js';

/**
 * node-redis writes a turn's commands together at setImmediate: of the replies that arrive in one turn,
 * the first is handed on at once and the others a turn after the client's write, so the command the
 * first lets go is written alone (clients/node-redis.ts, paced). A node-redis-shaped fake: sendCommand
 * answers when the test says.
 */
function fakeClient() {
  const pending: Array<(reply: unknown) => void> = [];
  return {
    pending,
    client: {
      evalSha: () => undefined,
      sendCommand: (_args: string[]) => new Promise<unknown>((resolve) => pending.push(resolve)),
    },
  };
}

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

test('of two replies in one turn, the first is handed on at once and the second after the next turn', async () => {
  const { pending, client } = fakeClient();
  const runner = nodeRedisRunner(client);
  const handed: string[] = [];
  runner.evalsha('sha', 1, ['k1']).then(() => handed.push('first'));
  runner.evalsha('sha', 1, ['k2']).then(() => handed.push('second'));
  pending[0]!('one');
  pending[1]!('two');
  await Promise.resolve();
  await Promise.resolve();
  await Promise.resolve();
  expect(handed).toEqual(['first']);
  await turn();
  expect(handed).toEqual(['first']);
  await turn();
  await turn();
  expect(handed).toEqual(['first', 'second']);
});

test('replies keep their values and errors, and a reply that comes alone is handed on at once', async () => {
  const { pending, client } = fakeClient();
  const runner = nodeRedisRunner(client);
  for (let i = 0; i < 3; i++) {
    const reply = runner.evalsha('sha', 1, [`k${i}`]);
    pending[i]!([i]);
    await expect(reply).resolves.toEqual([i]);
    await turn();
    await turn();
    await turn();
  }
  const failing = {
    evalSha: () => undefined,
    sendCommand: () => Promise.reject(new Error('NOSCRIPT No matching script')),
  };
  await expect(nodeRedisRunner(failing).evalsha('sha', 1, ['k'])).rejects.toThrow(/^NOSCRIPT/);
});
