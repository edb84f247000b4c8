import type { FrameworkRequest, HttpHandler } from '@sluice/core';
import { createHttpHandler, frameworkReader, MemoryStore, mergeHttpOptions } from '@sluice/core';
import { markOf, type SluiceOptions } from './decorators.js';
import { rejectThrottlerModuleOptions } from './throttler-shapes.js';

type Named = { readonly name: string }; // Nest's handler (a function) and controller (a class)
type Http = HttpHandler<FrameworkRequest, unknown>;

/** A module's limits: its own, and one per `@RateLimit()` handler, built on its first request and kept. */
export class RouteLimits {
  private readonly module: Http;
  private readonly byHandler = new WeakMap<object, Http | null>();
  /** The store of every handler's limiter that names none: handlers naming one limiter share counters. */
  private readonly shared = new MemoryStore();
  /** The handler's own limit each request was decided by (none kept for the module's: the default). */
  private readonly decided = new WeakMap<object, Http>();

  constructor(private readonly options: SluiceOptions) {
    rejectThrottlerModuleOptions(options); // forRoot and forRootAsync alike
    this.module = createHttpHandler(options, frameworkReader); // checked now, at start-up
  }

  /** The limit of this handler of this controller (null: not limited), remembered for `req` (decidedBy). */
  of(handler: Named, controller: Named, req: object | undefined): Http | null {
    if (!this.byHandler.has(handler)) this.byHandler.set(handler, this.build(handler, controller));
    const http = this.byHandler.get(handler)!; // null: not limited
    if (req !== undefined && http !== null && http !== this.module) this.decided.set(req, http);
    return http;
  }

  /** The limit that decided this request: its handler's own, else the module's. */
  decidedBy(req: object): Http {
    return this.decided.get(req) ?? this.module;
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
    // Built on the handler's first request and kept: never one made per request.
    return createHttpHandler(options, frameworkReader, [], { kept: true });
  }
}
