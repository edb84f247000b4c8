import { addressOf } from './ip.js';
import type { RequestReader, SubjectSource } from './types.js';

/**
 * Who a request counts against. Subjects carry their kind, so no two kinds can meet under one key:
 * - `ip:<address>`: the client address (IPv6 grouped by subnet, IPv4-mapped folded to IPv4);
 * - `key:<sha256>` / `token:<sha256>`: an API key or bearer token nobody verified, hashed (SHA-256, or
 *   HMAC-SHA-256 under `credentialSecret`), so the raw credential never reaches a key, a log or
 *   `onDecision`;
 * - `id:<value>`: a canonical subject, from `verify` or from a subject function.
 * When no source yields a subject, the request counts against its IP: a client cannot leave its
 * limit by sending no credential, or a malformed one.
 */
export interface Identity {
  /** The subject the limiter counts against. */
  readonly subject: string;
  /**
   * What `allowList` and `denyList` match besides the IP: the verified or custom subject, or the raw
   * key or token before hashing; undefined when the subject is the IP.
   */
  readonly listed: string | undefined;
}

export interface SubjectConfig<Req> {
  readonly sources: readonly SubjectSource<Req>[];
  /** Lower-case header name and/or query parameter of the API key. */
  readonly apiKeyHeader: string | undefined;
  readonly apiKeyQuery: string | undefined;
  readonly verify: ((credential: string, kind: 'api-key' | 'token') => unknown) | undefined;
  readonly ipv6Subnet: number | false;
  /** Hashes a key or token nobody verified (keys.ts `credentialDigest`). */
  readonly hash: (credential: string) => string;
}

/** `Bearer <token68>`; anything else counts as no token. */
const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;

export function isThenable<T>(value: unknown): value is PromiseLike<T> {
  return typeof value === 'object' && value !== null && typeof (value as PromiseLike<T>).then === 'function';
}

/**
 * A subject value from user code: a non-empty string, or absent (undefined, null, ''). A finite number
 * is its decimal string: @fastify/rate-limit's keyGenerator may return one (a user id), and pasted as
 * `subject` it failed every request with a 500 (review 3 of #28).
 */
function present(value: unknown, from: string): string | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  if (typeof value !== 'string') {
    throw new TypeError(
      `${from} must return a string (or a finite number), null or undefined; got ${typeof value}`,
    );
  }
  return value;
}

/** The bearer token of an Authorization header, or undefined when absent or malformed. */
export function bearerToken(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  return BEARER.exec(header)?.[1];
}

/** What a resolver tells the validation warnings of. */
export interface AddressNotices {
  /** A request limited by address that has none. */
  addressless(): void;
  /** A client address that is no IP address (`ip`, as the framework gave it). */
  notAnAddress(ip: string): void;
}

const QUIET: AddressNotices = { addressless() {}, notAnAddress() {} };

export class SubjectResolver<Req> {
  /** The last address and its subject: a client's requests often come in a row (a keep-alive connection). */
  private lastIp = '';
  private lastSubject = 'ip:unknown';

  constructor(
    private readonly config: SubjectConfig<Req>,
    private readonly reader: RequestReader<Req>,
    /** Told of what the validation warnings want to know. */
    private readonly notices: AddressNotices = QUIET,
  ) {}

  /**
   * The client address as a subject; `ip:unknown` when the framework has none: a closed socket (such a
   * request is never charged: handle.ts) or none at all (told to `addressless`).
   */
  ipSubject(req: Req): string {
    const ip = this.reader.ip(req);
    if (!ip) {
      if (this.reader.gone?.(req) !== true) this.notices.addressless();
      return 'ip:unknown';
    }
    if (ip === this.lastIp) return this.lastSubject;
    const address = addressOf(ip, this.config.ipv6Subnet);
    // Not silently a subject of its own: a proxy that writes something else would go unseen.
    if (address === undefined) this.notices.notAnAddress(ip);
    this.lastSubject = `ip:${address ?? ip}`;
    this.lastIp = ip;
    return this.lastSubject;
  }

  /** Tries the sources in order; the first that yields wins; the IP when none does. */
  resolve(req: Req, from = 0): Identity | Promise<Identity> {
    const { sources } = this.config;
    for (let i = from; i < sources.length; i++) {
      const found = this.trySource(req, sources[i]!);
      if (isThenable<Identity | undefined>(found)) {
        return Promise.resolve(found).then((id) => id ?? this.resolve(req, i + 1));
      }
      if (found !== undefined) return found;
    }
    return { subject: this.ipSubject(req), listed: undefined };
  }

  private trySource(
    req: Req,
    source: SubjectSource<Req>,
  ): Identity | undefined | PromiseLike<Identity | undefined> {
    if (source === 'ip') return { subject: this.ipSubject(req), listed: undefined };
    if (source === 'api-key') return this.credential(this.apiKey(req), 'api-key');
    if (source === 'token')
      return this.credential(bearerToken(this.reader.header(req, 'authorization')), 'token');
    const value = source(req);
    if (isThenable(value)) return Promise.resolve(value).then((v) => custom(present(v, 'subject')));
    return custom(present(value, 'subject'));
  }

  private apiKey(req: Req): string | undefined {
    const { apiKeyHeader, apiKeyQuery } = this.config;
    const fromHeader = apiKeyHeader === undefined ? undefined : this.reader.header(req, apiKeyHeader);
    if (fromHeader) return fromHeader;
    return (apiKeyQuery === undefined ? undefined : this.reader.query(req, apiKeyQuery)) || undefined;
  }

  private credential(
    raw: string | undefined,
    kind: 'api-key' | 'token',
  ): Identity | undefined | PromiseLike<Identity | undefined> {
    if (raw === undefined) return undefined;
    const { verify } = this.config;
    if (verify === undefined) {
      return { subject: `${kind === 'api-key' ? 'key' : 'token'}:${this.config.hash(raw)}`, listed: raw };
    }
    const verified = verify(raw, kind);
    if (isThenable(verified)) return Promise.resolve(verified).then((v) => custom(present(v, 'verify')));
    return custom(present(verified, 'verify'));
  }
}

function custom(value: string | undefined): Identity | undefined {
  return value === undefined ? undefined : { subject: `id:${value}`, listed: value };
}
