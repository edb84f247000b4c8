import { base64url, bytesOf, hmacSha256, sha256 } from './portable/sha.js';

/**
 * Key parts. Names and subjects are escaped so that no input can open or close a Redis Cluster hash
 * tag or shift a separator, and long subjects are hashed so keys stay small whatever a client sends.
 */

/** Characters escaped in names: the tag braces, the escape, the separator, the digest mark, the unprintable. */
const SPECIAL = /[%{}:#]|[^\x21-\x7e]/g;
/** The same for subjects, which may keep ':' (the subject ends its tag or its key). */
const SUBJECT_SPECIAL = /[%{}#]|[^\x21-\x7e]/g;
/** 1 for the char codes a plain subject may hold: printable ASCII but the SUBJECT_SPECIAL ones. */
const PLAIN_CODES = new Uint8Array(0x7f);
for (let code = 0x21; code <= 0x7e; code++)
  PLAIN_CODES[code] = '%{}#'.includes(String.fromCharCode(code)) ? 0 : 1;
/** Longer subjects are replaced by a digest: bounded keys whatever a client sends. */
const MAX_PLAIN_LENGTH = 64;

/** '%' and two hex digits per byte-sized code unit, '%u' and four for the rest (lone surrogates too). */
function escapeChar(char: string): string {
  const code = char.charCodeAt(0);
  return code < 0x100 ? `%${code.toString(16).padStart(2, '0')}` : `%u${code.toString(16).padStart(4, '0')}`;
}

/** A name (limiter, policy) as a key part: ':' and braces escaped. */
export function encodeName(name: string): string {
  return name.replace(SPECIAL, escapeChar);
}

/** A lone surrogate (in 'u' mode a pair is one code point, not Cs): a string with none is well formed. */
const LONE_SURROGATE = /\p{Cs}/u;

/**
 * The bytes text is hashed as, one string to one byte string: the UTF-8 of a well-formed string (what
 * keys have always hashed), else 0xFF, a byte UTF-8 never holds, then its UTF-16 code units big-endian.
 * UTF-8 alone is not injective: TextEncoder writes U+FFFD for every lone surrogate.
 */
function textBytes(text: string): Uint8Array {
  if (!LONE_SURROGATE.test(text)) return bytesOf(text);
  const bytes = new Uint8Array(1 + 2 * text.length);
  bytes[0] = 0xff;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    bytes[1 + 2 * i] = unit >> 8;
    bytes[2 + 2 * i] = unit & 0xff;
  }
  return bytes;
}

/** SHA-256 in base64url: how credentials and long subjects appear in keys. */
export function digest(value: string): string {
  return base64url(sha256(textBytes(value)));
}

/**
 * How credentials are hashed: HMAC-SHA-256 under `secret` when one is given (`credentialSecret`), so
 * whoever reads the store cannot test guessed keys against it; else plain SHA-256.
 */
export function credentialDigest(secret: string | Uint8Array | undefined): (credential: string) => string {
  if (secret === undefined) return digest;
  const key = bytesOf(secret);
  return (credential) => base64url(hmacSha256(key, textBytes(credential)));
}

/**
 * A subject as a key part. Injective: plain subjects never contain '%', '{', '}' or '#', escaped ones
 * mark each escape with '%' (each UTF-16 code unit, lone surrogates too), and digests start with '#'
 * and hash each string's own bytes (textBytes).
 */
export function encodeSubject(subject: string): string {
  // Consecutive calls often carry one subject (a client's burst, a keep-alive connection's address):
  // comparing with the last is cheaper than checking every character again.
  if (subject === lastSubject) return lastEncoded;
  lastEncoded = isPlain(subject) ? subject : encodeOther(subject);
  lastSubject = subject;
  return lastEncoded;
}

let lastSubject = '';
let lastEncoded = '';

/**
 * A key that is its own encoding: not an escape, which holds a '%', nor a digest, which starts with
 * '#'. Every key is some subject's encoding, so such a key is a plain subject's: that subject itself.
 * encodeSubject keeps a value that is not a string (decide does not check its subject) as its key.
 */
function ownKey(key: string): boolean {
  return typeof key !== 'string' || (key.charCodeAt(0) !== 0x23 && !key.includes('%'));
}

/**
 * A store's keys, counting those that are not their own encoding (`foreign`): while there is none,
 * a subject held is its own key, found with one lookup and no character read (MemoryStore's
 * decideSubject). Every write goes through `set` and `delete`, so the count cannot miss a key.
 */
export class HeldKeys<V> extends Map<string, V> {
  /** Keys held that are an escaped or digested subject's. */
  foreign = 0;

  override set(key: string, value: V): this {
    if (!ownKey(key) && !super.has(key)) this.foreign++;
    return super.set(key, value);
  }

  override delete(key: string): boolean {
    const deleted = super.delete(key);
    if (deleted && !ownKey(key)) this.foreign--;
    return deleted;
  }

  override clear(): void {
    super.clear();
    this.foreign = 0;
  }
}

function encodeOther(subject: string): string {
  if (subject.length > MAX_PLAIN_LENGTH) return `#${digest(subject)}`;
  const escaped = subject.replace(SUBJECT_SPECIAL, escapeChar);
  return escaped.length > MAX_PLAIN_LENGTH ? `#${digest(subject)}` : escaped;
}

/**
 * True when `subject` is its own encoding: short, printable, nothing escaped. A loop over char codes,
 * not a regular expression: it runs on every call.
 */
function isPlain(subject: string): boolean {
  const length = subject.length;
  if (length > MAX_PLAIN_LENGTH) return false;
  // Out of range (not ASCII) reads undefined: not plain either.
  for (let i = 0; i < length; i++) if (PLAIN_CODES[subject.charCodeAt(i)] !== 1) return false;
  return true;
}

/** A policy's namespace: prefix, limiter, policy and algorithm code, names escaped. */
export function policyNamespace(prefix: string, limiter: string, policy: string, code: string): string {
  return `${prefix}:${encodeName(limiter)}:${encodeName(policy)}:${code}`;
}
