import type { FrameworkRequest, HttpHandler } from '@sluice/core';
import { createHttpHandler, frameworkReader, MemoryStore, mergeHttpOptions } from '@sluice/core';
import { markOf, type SluiceOptions } from './decorators.js';

type Named = { readonly name: string }; // Nest's handler (a function) and controller (a class)
type Http = HttpHandler<FrameworkRequest, unknown>;

/**
 * A module's limits: its own, and one per `@RateLimit()` handler, built on its first request and kept.
 * `'ip'` is `req.ip` / `request.ip`: the platform's trust-proxy setting decides about X-Forwarded-For.
 */
export class RouteLimits {
  private readonly module: Http;
  private readonly byHandler = new WeakMap<object, Http | null>();
  /** The store of every handler's limiter that names none: handlers naming one limiter share counters. */
  private readonly shared = new MemoryStore();

  constructor(private readonly options: SluiceOptions) {
    this.module = createHttpHandler(options, frameworkReader); // checked now, at start-up
  }

  /** The limit of this handler of this controller; null when it is not limited. */
  of(handler: Named, controller: Named): Http | null {
    const known = this.byHandler.get(handler); // null: not limited
    if (known !== undefined) return known;
    const http = this.build(handler, controller);
    this.byHandler.set(handler, http);
    return http;
  }

  private build(handler: Named, controller: Named): Http | null {
    const mark = markOf(handler, controller);
    if (mark === 'skip') return null;
    if (mark === undefined) return this.module;
    const options = mergeHttpOptions(this.options, mark);
    if (options.limiter === undefined) {
      options.name ??= `${controller.name}.${handler.name}`;
      options.store ??= this.shared;
    }
    return createHttpHandler(options, frameworkReader);
  }
}
