import type { FastifyReply, FastifyRequest } from 'fastify';
import { MAX_INPUT_DEPTH } from '../../../shared/contracts/job-schema.js';
import { ApiError, sendApiError } from '../errors.js';

/**
 * The first top-level field of `body` that nests deeper than `max` arrays/objects (`[3]` for an item of
 * a top-level array, '' for a scalar body), or null when every field is within. Iterative: any depth is
 * walked without recursion, each value once.
 */
function fieldNestedBeyond(body: unknown, max: number): string | null {
  if (typeof body !== 'object' || body === null) return null;
  const stack: [unknown, number, string][] = Object.entries(body).map(([name, value]) => [
    value,
    0,
    Array.isArray(body) ? `[${name}]` : name,
  ]);
  while (stack.length > 0) {
    const [current, depth, field] = stack.pop()!;
    if (typeof current !== 'object' || current === null) continue;
    if (depth + 1 > max) return field;
    for (const child of Object.values(current)) stack.push([child, depth + 1, field]);
  }
  return null;
}

/**
 * preValidation hook for every route: a JSON body field nested deeper than MAX_INPUT_DEPTH (the limit a
 * run's input already had) gets 400 before any schema or handler sees it. Deeper values cannot be stored
 * (JSON.stringify recurses and overflows the stack: a resume value 5,000 levels deep answered 500)
 * and no field of this API needs them.
 */
export function limitJsonDepth(max: number = MAX_INPUT_DEPTH) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> => {
    const field = fieldNestedBeyond(request.body, max);
    if (field === null) return undefined;
    const path = field.startsWith('[') ? `body${field}` : `body.${field}`;
    return sendApiError(
      reply,
      new ApiError(
        400,
        'INVALID_INPUT',
        `${path} nests more than ${max} arrays/objects deep; every field of a JSON body may nest at most ${max} levels: flatten it`,
        { details: [{ path, message: `nests more than ${max} levels deep` }] },
      ),
    );
  };
}
