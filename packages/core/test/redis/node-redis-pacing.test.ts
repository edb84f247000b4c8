import { nodeRedisRunner } from '../../src/stores/redis/clients/node-redis.js';

/**
 * node-redis writes a turn's commands together at setImmediate: the first command of a turn is sent at
 * once and those after it a turn later, in order (clients/node-redis.ts, pacedSender), while every
 * reply is handed on as soon as the client gives it (a reply held back was failed by storeTimeout's
 * expiry, 79bc5e6). A node-redis-shaped fake: sendCommand records each command and answers when the
 * test says.
 */
function fakeClient() {
  const sent: string[] = [];
  const answer = new Map<string, { resolve(reply: unknown): void; reject(error: unknown): void }>();
  return {
    sent,
    answer,
    client: {
      evalSha: () => undefined,
      sendCommand(args: string[]): Promise<unknown> {
        const key = args[3]!;
        if (key === 'throws') throw new Error('ClientClosedError: The client is closed');
        sent.push(key);
        return new Promise<unknown>((resolve, reject) => answer.set(key, { resolve, reject }));
      },
    },
  };
}

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));
/** Every promise continuation queued so far, and those they queue (a few levels deep). */
const microtasks = async () => {
  for (let i = 0; i < 10; i++) await Promise.resolve();
};

test('the first command of a turn is sent at once, the rest of that turn together a turn later, in order', async () => {
  const { sent, client } = fakeClient();
  const runner = nodeRedisRunner(client);
  void runner.evalsha('sha', 1, ['a']);
  void runner.evalsha('sha', 1, ['b']);
  void runner.eval('script', 1, ['c']);
  expect(sent).toEqual(['a']);
  await turn();
  expect(sent).toEqual(['a', 'b', 'c']);
  // A turn with nothing held: its first command goes at once again.
  await turn();
  void runner.evalsha('sha', 1, ['d']);
  expect(sent).toEqual(['a', 'b', 'c', 'd']);
});

test('a command made while others wait goes behind them, never before', async () => {
  const { sent, client } = fakeClient();
  const runner = nodeRedisRunner(client);
  void runner.evalsha('sha', 1, ['a']);
  void runner.evalsha('sha', 1, ['b']);
  // Later in the same turn, from a continuation: still behind b.
  await microtasks();
  void runner.evalsha('sha', 1, ['c']);
  expect(sent).toEqual(['a']);
  await turn();
  expect(sent).toEqual(['a', 'b', 'c']);
});

test('stores sharing one client share its pacing: the client writes once a turn for all of them', async () => {
  const { sent, client } = fakeClient();
  void nodeRedisRunner(client).evalsha('sha', 1, ['a']);
  void nodeRedisRunner(client).evalsha('sha', 1, ['b']);
  expect(sent).toEqual(['a']);
  await turn();
  expect(sent).toEqual(['a', 'b']);
});

test('every reply, value or error, is handed on as soon as the client gives it, held or not', async () => {
  const { answer, client } = fakeClient();
  const runner = nodeRedisRunner(client);
  const handed: string[] = [];
  const replies = ['a', 'b', 'c'].map((key) =>
    runner.evalsha('sha', 1, [key]).then(
      (reply) => handed.push(`${key}=${String(reply)}`),
      (error: Error) => handed.push(`${key}!${error.message}`),
    ),
  );
  await turn();
  answer.get('a')!.resolve(1);
  answer.get('b')!.reject(new Error('NOSCRIPT No matching script'));
  answer.get('c')!.resolve(3);
  // Within this turn's microtasks: no turn of the event loop between a reply read and its caller.
  await microtasks();
  expect(handed).toEqual(['a=1', 'b!NOSCRIPT No matching script', 'c=3']);
  await Promise.all(replies);
});

test('a client that throws fails that command alone, whether it was sent at once or held', async () => {
  const { sent, client } = fakeClient();
  const runner = nodeRedisRunner(client);
  await expect(runner.evalsha('sha', 1, ['throws'])).rejects.toThrow(/client is closed/);
  await turn();
  void runner.evalsha('sha', 1, ['a']);
  const held = runner.evalsha('sha', 1, ['throws']);
  void runner.evalsha('sha', 1, ['b']);
  await expect(held).rejects.toThrow(/client is closed/);
  expect(sent).toEqual(['a', 'b']);
});
