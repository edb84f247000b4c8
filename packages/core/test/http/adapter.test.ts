import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import {
  callHandler,
  type Decision,
  frameworkReader,
  type HttpOutcome,
  passOn,
  passOnAwaiting,
} from '@sluice/core';

/** The events of a ServerResponse that the helpers watch, and its `end`. */
function fakeResponse(statusCode = 200) {
  const res = Object.assign(new EventEmitter(), { statusCode, writableEnded: false });
  return Object.assign(res, {
    end() {
      res.writableEnded = true;
      return res;
    },
  }) as unknown as ServerResponse;
}

function outcome(delayMs: number, finish?: (statusCode: number) => void, decision?: Decision) {
  return { delayMs, finish, decision };
}

/** A finish that records the status of every call. */
function recordFinish() {
  const calls: number[] = [];
  return { calls, finish: (statusCode: number) => void calls.push(statusCode) };
}

describe('passOn', () => {
  test('no delay: next at once, and no listener without a finish', () => {
    const res = fakeResponse();
    const next = jest.fn();
    passOn(outcome(0), res, next);
    expect(next).toHaveBeenCalledTimes(1);
    expect(res.listenerCount('close') + res.listenerCount('finish')).toBe(0);
  });

  test('finish gets the status sent when the response finishes', () => {
    const res = fakeResponse(201);
    const { calls, finish } = recordFinish();
    passOn(outcome(0, finish), res, () => {});
    expect(calls).toEqual([]);
    res.emit('finish');
    expect(calls[0]).toBe(201);
  });

  test('a connection closed first: finish waits for the handler to end the response, then gets 0', () => {
    const res = fakeResponse(200);
    const { calls, finish } = recordFinish();
    passOn(outcome(0, finish), res, () => {});
    res.emit('close');
    expect(calls).toEqual([]);
    res.end();
    expect(calls).toEqual([0]);
  });

  test('a connection closed after the handler ended the response: finish gets its status', () => {
    const res = fakeResponse(500);
    const { calls, finish } = recordFinish();
    passOn(outcome(0, finish), res, () => {});
    res.end();
    res.emit('close');
    expect(calls).toEqual([500]);
  });

  describe('a held request', () => {
    beforeEach(() => jest.useFakeTimers());
    afterEach(() => jest.useRealTimers());

    test('continues after delayMs, and stops watching the connection', () => {
      const res = fakeResponse();
      const next = jest.fn();
      passOn(outcome(250, undefined), res, next);
      jest.advanceTimersByTime(249);
      expect(next).not.toHaveBeenCalled();
      jest.advanceTimersByTime(1);
      expect(next).toHaveBeenCalledTimes(1);
      expect(res.listenerCount('close')).toBe(0);
    });

    test('is not passed on when the client leaves while held, and its charge comes back', () => {
      const res = fakeResponse();
      const next = jest.fn();
      const refund = jest.fn(async () => {});
      const { calls, finish } = recordFinish();
      passOn(outcome(250, finish, { allowed: true, refund } as unknown as Decision), res, next);
      jest.advanceTimersByTime(100);
      res.emit('close');
      jest.advanceTimersByTime(1000);
      expect(next).not.toHaveBeenCalled();
      expect(refund).toHaveBeenCalledTimes(1);
      expect(calls).toEqual([]);
    });
  });
});

describe('callHandler', () => {
  const decision = { allowed: false } as Decision;
  const blocked = (handler: HttpOutcome<string, string>['handler']) =>
    ({ pass: false, status: 429, decision, handler }) as HttpOutcome<string, string>;

  test('the handler answers with the request, the response and the decision', () => {
    const handler = jest.fn();
    const fail = jest.fn();
    const settled = jest.fn();
    callHandler(blocked(handler), 'req', 'res', fail, settled);
    expect(handler).toHaveBeenCalledWith('req', 'res', decision);
    expect(fail).not.toHaveBeenCalled();
    // It returned nothing: it answers as it does (from a callback too), and is not answered for.
    expect(settled).not.toHaveBeenCalled();
  });

  test('a handler that returns a body (errorResponseBuilder) is answered for', async () => {
    const settled = jest.fn();
    callHandler(
      blocked(() => ({ error: 'slow down' })),
      'req',
      'res',
      jest.fn(),
      settled,
    );
    expect(settled).toHaveBeenCalledTimes(1);
    const later = jest.fn();
    callHandler(blocked((async () => ({ error: 'slow down' })) as never), 'req', 'res', jest.fn(), later);
    await new Promise((resolve) => setImmediate(resolve));
    expect(later).toHaveBeenCalledTimes(1);
  });

  test('a throw goes to fail', () => {
    const fail = jest.fn();
    callHandler(
      blocked(() => {
        throw new Error('boom');
      }),
      'req',
      'res',
      fail,
      () => {},
    );
    expect(fail).toHaveBeenCalledWith(new Error('boom'));
  });

  test('a rejection goes to fail', async () => {
    const failed = new Promise((resolve) => {
      callHandler(
        blocked((async () => Promise.reject(new Error('later'))) as () => void),
        'r',
        's',
        resolve,
        () => {},
      );
    });
    await expect(failed).resolves.toEqual(new Error('later'));
  });
});

describe('frameworkReader', () => {
  const req = {
    ip: '203.0.113.7',
    headers: { 'x-api-key': 'k1', 'x-many': ['a', 'b'] as unknown as string },
    query: { key: ['q1', 'q2'], one: 'q' },
  };

  test('reads ip, the first value of a header or a query parameter', () => {
    expect(frameworkReader.ip(req)).toBe('203.0.113.7');
    expect(frameworkReader.header(req, 'x-api-key')).toBe('k1');
    expect(frameworkReader.header(req, 'x-many')).toBe('a');
    expect(frameworkReader.query(req, 'key')).toBe('q1');
    expect(frameworkReader.query(req, 'one')).toBe('q');
  });

  test('absent or non-string values read as undefined', () => {
    expect(frameworkReader.header(req, 'authorization')).toBeUndefined();
    expect(frameworkReader.query({ headers: {} }, 'key')).toBeUndefined();
    expect(frameworkReader.query({ headers: {}, query: { key: { nested: 'x' } } }, 'key')).toBeUndefined();
  });
});

describe('passOnAwaiting (Koa, Hono: middleware that awaits the rest of the chain)', () => {
  test('no finish and no delay: the chain itself, no listener', async () => {
    const res = fakeResponse();
    const next = jest.fn(() => Promise.resolve());
    await passOnAwaiting(outcome(0), res, next);
    expect(next).toHaveBeenCalledTimes(1);
    expect(res.listenerCount('close') + res.listenerCount('finish')).toBe(0);
  });

  test('finish gets the status sent when the response finishes after the chain', async () => {
    const res = fakeResponse(201);
    const { calls, finish } = recordFinish();
    await passOnAwaiting(outcome(0, finish), res, () => Promise.resolve());
    expect(calls).toEqual([]);
    res.emit('finish');
    expect(calls).toEqual([201]);
  });

  test('the client left during the chain, which nobody ends (Koa 2): finish gets 0 once the chain settles', async () => {
    const res = fakeResponse();
    const { calls, finish } = recordFinish();
    let settle!: () => void;
    const chain = passOnAwaiting(outcome(0, finish), res, () => new Promise<void>((r) => (settle = r)));
    Object.assign(res, { destroyed: true });
    res.emit('close');
    expect(calls).toEqual([]); // the handler still runs: its lease holds
    settle();
    await chain;
    expect(calls).toEqual([0]);
  });

  test('the client left after the chain settled, before the answer was written: finish gets 0', async () => {
    const res = fakeResponse();
    const { calls, finish } = recordFinish();
    await passOnAwaiting(outcome(0, finish), res, () => Promise.resolve());
    res.emit('close');
    expect(calls).toEqual([0]);
  });

  test('a chain that rejects still settles finish, and the error goes on', async () => {
    const res = fakeResponse();
    const { calls, finish } = recordFinish();
    const chain = passOnAwaiting(outcome(0, finish), res, () => Promise.reject(new Error('handler failed')));
    Object.assign(res, { destroyed: true });
    await expect(chain).rejects.toThrow('handler failed');
    expect(calls).toEqual([0]);
  });

  test("without Node's response (Hono elsewhere): finish gets the framework's status when the chain settles", async () => {
    const { calls, finish } = recordFinish();
    await passOnAwaiting(
      outcome(0, finish),
      undefined,
      () => Promise.resolve(),
      () => 503,
    );
    expect(calls).toEqual([503]);
  });

  test('held, and the client left meanwhile: the chain never runs, the charge comes back', async () => {
    const res = fakeResponse();
    const refund = jest.fn(() => Promise.resolve());
    const next = jest.fn(() => Promise.resolve());
    const held = passOnAwaiting(
      outcome(50, undefined, { allowed: true, refund } as unknown as Decision),
      res,
      next,
    );
    res.emit('close');
    await held;
    expect(next).not.toHaveBeenCalled();
    expect(refund).toHaveBeenCalledTimes(1);
  });
});
