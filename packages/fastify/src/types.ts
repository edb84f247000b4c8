import type { Decision, HandlerApi, HttpOptions } from '@sluice/core';
import type { FastifyReply, FastifyRequest, preHandlerHookHandler } from 'fastify';

/** The request hook the limiter runs in. */
export type SluiceHook = 'onRequest' | 'preHandler';

/**
 * A route's own limit (`config.rateLimit`): the HTTP options of the contract and `hook`. What it does
 * not set comes from the plugin's options; its limiter is named after the route (`'GET /search'`)
 * unless it sets `name`.
 */
export interface RouteRateLimitOptions extends HttpOptions<FastifyRequest, FastifyReply> {
  /**
   * 'onRequest' (default) decides before the body is read; 'preHandler' decides after the earlier
   * hooks ran, so `subject` can read what authentication put on the request.
   */
  hook?: SluiceHook;
}

/** The plugin's options: the defaults of every route, and the global limit. */
export interface SluiceFastifyOptions extends RouteRateLimitOptions {
  /** true (default): every route is limited; false: only routes with `config.rateLimit`. */
  global?: boolean;
}

/**
 * A hook that limits wherever it is placed (`app.rateLimit()`), such as the not-found handler's
 * preHandler, with its limiter and the request's subject at hand.
 */
export type RateLimitHook = preHandlerHookHandler & HandlerApi<FastifyRequest>;

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * A hook that limits wherever it is placed: with no options, the plugin's global limit (a request
     * is charged once even if its route has that limit too); with options, a limiter of its own.
     * `app.setNotFoundHandler({ preHandler: app.rateLimit() }, handler)` limits 404s.
     */
    rateLimit(options?: RouteRateLimitOptions): RateLimitHook;
  }
  interface FastifyContextConfig {
    /** This route's own limit (inherits what it does not set), or false: not limited. */
    rateLimit?: RouteRateLimitOptions | false;
  }
  interface FastifyRequest {
    /** The decision of the limiter that ran for this request; undefined when none did. */
    rateLimit?: Decision;
  }
}
