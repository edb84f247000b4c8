import { IncomingMessage } from 'node:http';
import type { Decision } from '../../decision.js';

/**
 * Where `req.rateLimit` is kept. Express swaps every request's prototype for its app's `request`, and
 * after that V8 gives each request a hidden class of its own: adding a property to one builds a new
 * hidden class and copies all the request's property descriptors into it, about 1 µs a request plus
 * the garbage it leaves (V8 profiler, Express 5). So the decision goes into a WeakMap behind a
 * `rateLimit` accessor on Express's own request prototype, the one every app's `request` inherits
 * from: a request leaving a mounted app, which gets its parent app's prototype back, still shows it.
 * A request outside Express (no such prototype) gets an own property, as does one that has one.
 * Used by @sluice/express, and by @sluice/nestjs on either platform (Nest on Express hands the guard
 * Express requests; on Fastify, Fastify's own, which get the property).
 */
const decisions = new WeakMap<object, Decision | undefined>();

const accessor: PropertyDescriptor = {
  get(this: object) {
    return decisions.get(this);
  },
  set(this: object, decision: Decision | undefined) {
    decisions.set(this, decision);
  },
  configurable: true,
  enumerable: false,
};

/** The prototype of the request last seen: requests of one app share it, so most calls stop there. */
let prepared: unknown = null;

/** Puts the accessor in place when `req` comes from Express (its prototype chain says so). */
function prepare(req: object): void {
  const proto: unknown = Object.getPrototypeOf(req);
  if (proto === prepared) return;
  prepared = proto;
  for (let p = proto; p !== null; ) {
    const next: unknown = Object.getPrototypeOf(p);
    if (next === IncomingMessage.prototype) {
      if (!Object.hasOwn(p as object, 'rateLimit')) Object.defineProperty(p, 'rateLimit', accessor);
      return;
    }
    p = next;
  }
}

/** `req.rateLimit = decision`, without giving an Express request a property of its own. */
export function setDecision(req: { rateLimit?: Decision }, decision: Decision): void {
  prepare(req);
  req.rateLimit = decision;
}
