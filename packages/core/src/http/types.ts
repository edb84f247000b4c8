import type { Decision } from '../decision.js';
import type { Duration } from '../duration.js';
import type { Limiter } from '../limiter.js';
import type { LimiterOptions } from '../options.js';

/** Who is limited: a built-in source or a function of the request. */
export type SubjectSource<Req> =
  | 'ip'
  | 'api-key'
  | 'token'
  | ((req: Req) => string | undefined | Promise<string | undefined>);

/** The HTTP options, the same for Express and Fastify (`../shared/API.md`). */
export interface HttpOptions<Req = unknown, Res = unknown> extends LimiterOptions {
  /** An existing limiter instead of the core options. */
  limiter?: Limiter;
  subject?: SubjectSource<Req> | SubjectSource<Req>[];
  apiKey?: { header?: string; query?: string };
  verify?: (credential: string, kind: 'api-key' | 'token') => string | null | Promise<string | null>;
  ipv6Subnet?: number | false;
  cost?: number | ((req: Req) => number | Promise<number>);
  skip?: (req: Req) => boolean | Promise<boolean>;
  allowList?: string[] | ((req: Req, subject: string | undefined) => boolean | Promise<boolean>);
  denyList?: string[] | ((req: Req, subject: string | undefined) => boolean | Promise<boolean>);
  ban?: { after: number; within?: Duration; for: Duration };
  headers?: 'draft-10' | 'draft-7' | 'draft-6' | false;
  legacyHeaders?: boolean;
  statusCode?: number;
  handler?: (req: Req, res: Res, decision: Decision) => void;
  shadow?: boolean;
  onDecision?: (req: Req, decision: Decision) => void;
  skipFailedRequests?: boolean;
  skipSuccessfulRequests?: boolean;
}

/** How core reads a framework's request; an adapter passes one set of these for all requests. */
export interface RequestReader<Req> {
  /** The client IP as the framework resolved it (Express `req.ip`, Fastify `request.ip`). */
  ip(req: Req): string | undefined;
  /** A header's value, name in lower case; the first value when repeated. */
  header(req: Req, name: string): string | undefined;
  /** A query-string parameter's value; the first value when repeated. */
  query(req: Req, name: string): string | undefined;
}
