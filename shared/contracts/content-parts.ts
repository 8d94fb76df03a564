import { z } from 'zod';
import type { ContentPart } from './run-record.js';

/** The schemes an image part's URL may have: the model fetches http(s); a data: URL carries the bytes. */
const IMAGE_URL_SCHEMES = ['http:', 'https:', 'data:'];

/** Longest image URL accepted: a data: URL of a picture of a few MB (the run's input limit applies too). */
const MAX_IMAGE_URL_CHARS = 10_000_000;

const imageUrlSchema = z
  .string()
  .max(MAX_IMAGE_URL_CHARS, `url must be at most ${MAX_IMAGE_URL_CHARS} characters`)
  .superRefine((url, context) => {
    let scheme: string | undefined;
    try {
      scheme = new URL(url).protocol;
    } catch {
      scheme = undefined;
    }
    if (scheme && IMAGE_URL_SCHEMES.includes(scheme) && (scheme !== 'data:' || /^data:image\/[\w.+-]+[;,]/i.test(url)))
      return;
    context.addIssue({
      code: 'custom',
      message: `url must be an http://, https:// or data:image/… URL (got ${scheme ? `a ${scheme} URL` : `'${url.slice(0, 40)}'`}); send the picture's address or its bytes as a data: URL`,
    });
  });

/** An image part of a user message, by URL (http(s), or the bytes as a data: URL). */
export const imagePartSchema = z
  .object({
    type: z.literal('image_url'),
    image_url: z.object({ url: imageUrlSchema, detail: z.enum(['auto', 'low', 'high']).optional() }).strict(),
  })
  .strict();

/** At most this many content parts in one user message. */
export const MAX_CONTENT_PARTS = 64;

/** One content part of a user message (OpenAI's content-part format): text, or an image by URL. */
export const contentPartSchema: z.ZodType<ContentPart> = z.discriminatedUnion(
  'type',
  [z.object({ type: z.literal('text'), text: z.string().max(100_000) }).strict(), imagePartSchema],
  { error: 'a content part is {"type": "text", "text": …} or {"type": "image_url", "image_url": {"url": …}}' },
);

/** A user message's content as parts: at least one text part with some text, at most 64 parts. */
export const userContentPartsSchema = z
  .array(contentPartSchema)
  .min(1, 'give at least one content part')
  .max(MAX_CONTENT_PARTS, `at most ${MAX_CONTENT_PARTS} content parts`)
  .refine((parts) => parts.some((part) => part.type === 'text' && part.text.trim() !== ''), {
    message: 'the content parts need a text part with the question or task',
  });
