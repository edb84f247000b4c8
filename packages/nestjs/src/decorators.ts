import { createHttpHandler, frameworkReader, type HttpOptions, MemoryStore } from '@sluice/core';
import { rejectThrottleDecoratorOptions, rejectThrottlerModuleOptions } from './throttler-shapes.js';

/** The HTTP options of the contract; callbacks get the platform's request, `handler` its `res`/`reply`. */
// biome-ignore lint/suspicious/noExplicitAny: Express's or Fastify's request and response, by platform
export type SluiceOptions = HttpOptions<any, any>;

/** The decorators' marks on handlers and controllers: here, not in reflect-metadata, where keys can clash. */
const marks = new WeakMap<object, SluiceOptions | 'skip'>();
const STAND_IN = { limit: 1, window: '1s' }; // for checking: the policy the module's options may fill in

/** A handler's own mark wins over its controller's. */
export function markOf(handler: object, controller: object): SluiceOptions | 'skip' | undefined {
  return marks.get(handler) ?? marks.get(controller);
}

const mark =
  (value: SluiceOptions | 'skip'): ClassDecorator & MethodDecorator =>
  (target: object, _key?: string | symbol, descriptor?: PropertyDescriptor) =>
    void marks.set(descriptor?.value ?? target, value);

/** This handler, or each of this controller's, limited by these options over the module's; replaces `@Throttle()`. */
export function RateLimit(options: SluiceOptions): ClassDecorator & MethodDecorator {
  if (typeof options !== 'object' || options === null) throw new TypeError('@RateLimit() takes options');
  rejectThrottlerModuleOptions(options);
  rejectThrottleDecoratorOptions(options);
  const standIn = (options.limiter ?? options.policies ?? options.plans) === undefined ? STAND_IN : {};
  const store = options.limiter === undefined ? new MemoryStore() : undefined;
  createHttpHandler({ ...standIn, ...options, store, validate: false }, frameworkReader);
  return mark(options);
}

/** Not limited: this handler, or every handler of this controller. Replaces `@SkipThrottle()`. */
export function SkipRateLimit(): ClassDecorator & MethodDecorator {
  return mark('skip');
}
