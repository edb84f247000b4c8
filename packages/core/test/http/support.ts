import type { RequestReader } from '@sluice/core';

/** A framework-free request for the HTTP layer's tests. */
export interface FakeRequest {
  ip?: string;
  headers?: Record<string, string>;
  query?: Record<string, string>;
}

export const fakeReader: RequestReader<FakeRequest> = {
  ip: (req) => req.ip,
  header: (req, name) => req.headers?.[name],
  query: (req, name) => req.query?.[name],
};
