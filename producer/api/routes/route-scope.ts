import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';

/** The fastify instance a route plugin registers on (zod schemas as types), for its parts to register on too. */
export type RouteScope = Parameters<FastifyPluginAsyncZod>[0];
