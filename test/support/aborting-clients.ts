import { connect } from 'node:net';

/** What a slow handler saw: how many ran, how many at once at most. */
export interface Probe {
  ran: number;
  inFlight: number;
  most: number;
}

export function probe(): Probe {
  return { ran: 0, inFlight: 0, most: 0 };
}

/** A handler's work of `workMs`, or until `done` settles, counted in `p`. */
export async function work(p: Probe, workMs: number | Promise<void>): Promise<void> {
  p.ran++;
  p.most = Math.max(p.most, ++p.inFlight);
  await (typeof workMs === 'number' ? new Promise((resolve) => setTimeout(resolve, workMs)) : workMs);
  p.inFlight--;
}

/** `count` clients on 127.0.0.1:`port` that each send `GET <path>` and hang up after `afterMs`. */
export function hangUps(port: number, count: number, afterMs: number, path = '/'): Promise<void> {
  const one = () =>
    new Promise<void>((resolve) => {
      const socket = connect(port, '127.0.0.1', () => {
        socket.write(`GET ${path} HTTP/1.1\r\nHost: localhost\r\n\r\n`);
        setTimeout(() => {
          socket.destroy();
          resolve();
        }, afterMs);
      });
      socket.on('error', () => resolve());
    });
  return Promise.all(Array.from({ length: count }, one)).then(() => undefined);
}
