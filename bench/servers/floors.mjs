/**
 * The floor of a limiter that answers as Sluice does: it reads the client address (the 'ip' subject)
 * and gives every request the answer Sluice gives it, made once, limiting nothing. On /allowed it sets
 * Sluice's RateLimit headers and passes on; on /denied it answers 429 with those headers and Sluice's
 * problem+json body. No limiter that reads the address and answers alike can be cheaper, so its share
 * of bare throughput is the most such a limiter can keep in the same run.
 */
import { createHttpHandler, frameworkReader, PROBLEM_CONTENT_TYPE } from '@sluice/core';
import { ROUTES } from './limits.mjs';

/** What Sluice answers on `route` as the http suite's servers configure it: a client's second request's outcome. */
export function answerOf(route) {
  const { limit, windowMs } = ROUTES[route];
  const http = createHttpHandler({ name: route, limit, window: windowMs }, frameworkReader);
  const req = { ip: '10.0.0.1', headers: {} };
  http.handle(req);
  return http.handle(req);
}

/** The address read last: the read is what is measured, and it goes somewhere. */
let _address;

/** Express middleware giving every request `answer`. */
export function expressFloor(answer) {
  const { headers } = answer;
  return (req, res, next) => {
    _address = req.ip;
    for (const name in headers) res.setHeader(name, headers[name]);
    if (answer.pass) return next();
    res.statusCode = answer.status;
    res.setHeader('Content-Type', PROBLEM_CONTENT_TYPE);
    res.end(answer.body);
  };
}

/** Fastify onRequest hook giving every request `answer`. */
export function fastifyFloor(answer) {
  const { headers } = answer;
  return (request, reply, done) => {
    _address = request.ip;
    reply.headers(headers);
    if (answer.pass) return done();
    reply.code(answer.status).type(PROBLEM_CONTENT_TYPE).send(answer.body);
  };
}
