/**
 * Responses as a fetch handler returns them: headers that may be immutable (a `fetch()` answer,
 * `Response.redirect`), and bodies streamed after the handler returned.
 */

/** `response` with `headers` set on it: in place when its headers can change, else on a copy. */
export function withHeaders(response: Response, headers: Headers): Response {
  try {
    for (const [name, value] of headers) response.headers.set(name, value);
    return response;
  } catch {
    const copy = new Response(response.body, response);
    for (const [name, value] of headers) copy.headers.set(name, value);
    return copy;
  }
}

/**
 * `response` with `done(status)` called once its body has been read to its end, cancelled or errored:
 * a streaming body outlives the handler, and a lease or a refund must wait for it. A response with no
 * body, or one that cannot be rebuilt (a WebSocket upgrade, 101), is done now.
 */
export function whenBodyDone(response: Response, done: (status: number) => void): Response {
  const { body, status } = response;
  if (body === null || status === 101 || (response as { webSocket?: unknown }).webSocket) {
    done(status);
    return response;
  }
  const source = body.getReader();
  const watched = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const chunk = await source.read();
        if (chunk.done) {
          controller.close();
          done(status);
        } else controller.enqueue(chunk.value);
      } catch (error) {
        controller.error(error);
        done(0);
      }
    },
    cancel(reason) {
      done(0);
      return source.cancel(reason);
    },
  });
  return new Response(watched, response);
}
