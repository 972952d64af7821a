import sharp from 'sharp';
import zlib from 'node:zlib';

/** A solid square of one colour, as PNG. */
export const solidPng = (size: number, colour: { r: number; g: number; b: number }) =>
  sharp({ create: { width: size, height: size, channels: 4, background: { ...colour, alpha: 1 } } }).png().toBuffer();

/** An animation of one solid frame per colour (red, then blue by default), as GIF or WebP. */
export async function animation(
  size: number,
  format: 'gif' | 'webp' = 'gif',
  colours = [{ r: 255, g: 0, b: 0 }, { r: 0, g: 0, b: 255 }],
): Promise<Buffer> {
  const frames = await Promise.all(colours.map((c) => solidPng(size, c)));
  return sharp(frames, { join: { animated: true } })
    .toFormat(format, { delay: colours.map(() => 100), loop: 0 })
    .toBuffer();
}

/** Format, size of one frame and number of frames of an image. */
export async function imageInfo(data: Buffer): Promise<{ format: string | undefined; width: number; height: number; frames: number }> {
  const m = await sharp(data, { animated: true }).metadata();
  return { format: m.format, width: m.width ?? 0, height: m.pageHeight ?? m.height ?? 0, frames: m.pages ?? 1 };
}

/** The colour of the top-left pixel of the first frame. */
export async function firstPixel(data: Buffer): Promise<[number, number, number]> {
  const raw = await sharp(data).removeAlpha().raw().toBuffer();
  return [raw[0]!, raw[1]!, raw[2]!];
}

/** A PNG of noise (so that it compresses badly) with bytes flipped all through its pixel data: the header reads, the pixels do not. */
export async function corruptPng(size = 200): Promise<Buffer> {
  const pixels = Buffer.from(Array.from({ length: size * size * 3 }, (_, i) => (i * 7919) % 251));
  const png = Buffer.from(await sharp(pixels, { raw: { width: size, height: size, channels: 3 } }).png().toBuffer());
  for (let i = 100; i < png.length - 20; i += 50) png[i]! ^= 0xff;
  return png;
}

/** A two-frame animated PNG (red, then blue), written by hand: libvips can read one but not write one. */
export function animatedPng(size: number): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(zlib.crc32(body));
    return Buffer.concat([length, body, crc]);
  };
  const u32 = (...values: number[]) => Buffer.concat(values.map((v) => { const b = Buffer.alloc(4); b.writeUInt32BE(v); return b; }));
  const pixels = (r: number, g: number, b: number) => {
    const row = Buffer.concat([Buffer.from([0]), Buffer.alloc(size * 4).map((_, i) => [r, g, b, 255][i % 4]!)]);
    return zlib.deflateSync(Buffer.concat(Array.from({ length: size }, () => row)));
  };
  // fcTL: sequence, width, height, x, y, delay 1/10 s, dispose none, blend source.
  const frameControl = (sequence: number) => Buffer.concat([u32(sequence, size, size, 0, 0), Buffer.from([0, 1, 0, 10, 0, 0])]);
  return Buffer.concat([
    Buffer.from('89504e470d0a1a0a', 'hex'),
    chunk('IHDR', Buffer.concat([u32(size, size), Buffer.from([8, 6, 0, 0, 0])])),
    chunk('acTL', u32(2, 0)),
    chunk('fcTL', frameControl(0)),
    chunk('IDAT', pixels(255, 0, 0)),
    chunk('fcTL', frameControl(1)),
    chunk('fdAT', Buffer.concat([u32(2), pixels(0, 0, 255)])),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}
