import { fileTypeFromBuffer } from 'file-type';
import type { FormatEnum, Metadata } from 'sharp';
import { loadSharp } from './sharp-loader.js';
import { ApiError, errors } from '../domain/errors.js';

/** The real server's DEFAULT_EMOJI_SIZE: emoji are kept within 64x64 pixels. */
export const EMOJI_SIZE = 64;
/** The real server's IMAGE_BOMB_TOTAL_PIXELS, counted over every frame as it does for emoji. */
export const IMAGE_BOMB_TOTAL_PIXELS = 90_000_000;
/** The real server's MAX_EMOJI_GIF_FILE_SIZE_BYTES: the stored image (the still one, when animated) may not be larger. */
export const MAX_EMOJI_STORED_BYTES = 128 * 1024;

type EmojiFormat = 'png' | 'jpeg' | 'gif' | 'webp';

/** The formats whose bytes we decode, by what the bytes say they are (never by what the client declared). */
const DECODED: Readonly<Record<string, EmojiFormat>> = {
  'image/png': 'png',
  'image/apng': 'png',
  'image/jpeg': 'jpeg',
  'image/gif': 'gif',
  'image/webp': 'webp',
};
/** The format each accepted content type (EMOJI_IMAGE_TYPES) is stored in. */
const DECLARED: Readonly<Record<string, EmojiFormat>> = {
  'image/png': 'png',
  'image/jpeg': 'jpeg',
  'image/gif': 'gif',
  'image/webp': 'webp',
};
/** What a multipart part without a Content-Type header arrives as (busboy's default) or says when it does not know. */
const UNDECLARED = new Set(['', 'text/plain', 'application/octet-stream']);

/**
 * The content type of an uploaded emoji: the declared one, or when the client declared none,
 * what the bytes say, as for attachments.
 */
export async function emojiContentType(declared: string, data: Buffer): Promise<string> {
  if (!UNDECLARED.has(declared)) return declared;
  const detected = (await fileTypeFromBuffer(data).catch(() => undefined))?.mime;
  const format = detected === undefined ? undefined : DECODED[detected];
  return format === undefined ? declared : `image/${format}`;
}

/** Formats that can hold an animation after resizing (libvips cannot write animated PNG). */
const ANIMATED_OUTPUT = new Set<EmojiFormat>(['gif', 'webp']);

export interface EmojiImage {
  /** What source_url serves, in the declared content type's format. */
  data: Buffer;
  /** The first frame as a PNG, when `data` is animated; null otherwise. */
  still: Buffer | null;
}

const undecodable = () => errors.badRequest('Could not decode image; did you upload an image file?');

/**
 * The stored forms of an uploaded emoji image, like the real server's resize_emoji: an image larger
 * than 64x64 is scaled down to fit (every frame of an animation), in the format of the declared
 * content type; an animated one also gets a still PNG of its first frame. An image that already
 * fits, in the declared format, is kept byte for byte.
 */
export async function prepareEmojiImage(data: Buffer, declaredType: string): Promise<EmojiImage> {
  const out = DECLARED[declaredType];
  if (out === undefined) throw errors.badRequest('Invalid image format');
  // Only the four web formats reach libvips: it could parse SVG, TIFF, HEIF and more, which we never serve.
  const detected = (await fileTypeFromBuffer(data).catch(() => undefined))?.mime ?? '';
  const format = DECODED[detected];
  if (format === undefined) throw undecodable();
  // 'truncated': a recoverable flaw (a bad checksum, a stray byte) is let through as browsers do,
  // an image whose pixels cannot be read is not. The real server's libvips lets both through.
  const options = { failOn: 'truncated', limitInputPixels: IMAGE_BOMB_TOTAL_PIXELS } as const;

  const sharp = await loadSharp();
  let meta: Metadata;
  try {
    // Only the header is read here; the size limit is ours, below, with the real server's message.
    meta = await sharp(data, { ...options, animated: true, limitInputPixels: false }).metadata();
  } catch {
    throw undecodable();
  }
  const width = meta.width ?? 0;
  const frames = meta.pages ?? 1;
  const frameHeight = meta.pageHeight ?? meta.height ?? 0;
  if (width <= 0 || frameHeight <= 0) throw undecodable();
  if (width * frameHeight * frames > IMAGE_BOMB_TOTAL_PIXELS) throw errors.badRequest('Image size exceeds limit.');

  // libvips reads only the default image of an animated PNG, so one is animated only while kept as uploaded.
  const keep = width <= EMOJI_SIZE && frameHeight <= EMOJI_SIZE && format === out;
  const animated = keep ? frames > 1 || detected === 'image/apng' : frames > 1 && ANIMATED_OUTPUT.has(out);
  const fit = { width: EMOJI_SIZE, height: EMOJI_SIZE, fit: 'inside', withoutEnlargement: true } as const;
  try {
    // A kept image is decoded all the same: bytes that only begin like an image are refused.
    if (keep) await sharp(data, { ...options, animated: frames > 1 }).raw().toBuffer();
    const stored = keep
      ? data
      : await sharp(data, { ...options, animated }).resize(fit).toFormat(out as keyof FormatEnum).toBuffer();
    const still = animated ? await sharp(data, options).resize(fit).png().toBuffer() : null;
    if ((still ?? stored).length > MAX_EMOJI_STORED_BYTES) throw errors.badRequest('Image size exceeds limit');
    return { data: stored, still };
  } catch (error) {
    if (error instanceof ApiError) throw error;
    throw errors.badRequest('Image is corrupted or truncated');
  }
}
