// middleware.js of a Next.js app (Edge runtime). Vercel sets x-real-ip to the client's address. A
// refusal is answered here; an allowed request goes on to the route (return nothing).
import { rateLimiter } from '@sluice/fetch';

const limit = rateLimiter({
  limit: 20,
  window: '10s',
  getIp: (request) => request.headers.get('x-real-ip') ?? undefined,
});

export async function middleware(request) {
  const { response } = await limit.check(request);
  return response;
}

export const config = { matcher: '/api/:path*' };
