import t from 'tap';
import { prepareEmojiImage, EMOJI_SIZE } from '../../../src/services/realm-emoji-image.js';
import { animatedPng, animation, corruptPng, imageInfo, firstPixel, solidPng } from '../../helpers/images.js';
import sharp from 'sharp';

const red = { r: 255, g: 0, b: 0 };

t.test('an animated GIF larger than 64x64 keeps its frames, and gets a still PNG of the first frame', async (t) => {
  const { data, still } = await prepareEmojiImage(await animation(100), 'image/gif');
  t.same(await imageInfo(data), { format: 'gif', width: EMOJI_SIZE, height: EMOJI_SIZE, frames: 2 });
  t.ok(still, 'a still image');
  t.same(await imageInfo(still!), { format: 'png', width: EMOJI_SIZE, height: EMOJI_SIZE, frames: 1 });
  t.same(await firstPixel(still!), [255, 0, 0], 'the still image is the first (red) frame');
});

t.test('an animated WebP stays an animated WebP', async (t) => {
  const { data, still } = await prepareEmojiImage(await animation(100, 'webp'), 'image/webp');
  t.match(await imageInfo(data), { format: 'webp', width: EMOJI_SIZE, height: EMOJI_SIZE, frames: 2 });
  t.match(await imageInfo(still!), { format: 'png', frames: 1 });
});

t.test('a small animation is kept as uploaded, still image and all', async (t) => {
  const gif = await animation(32);
  const { data, still } = await prepareEmojiImage(gif, 'image/gif');
  t.equal(Buffer.compare(data, gif), 0, 'byte for byte');
  t.same(await imageInfo(still!), { format: 'png', width: 32, height: 32, frames: 1 });
});

t.test('an animated PNG: libvips reads only its first frame, so it stays animated only while kept as uploaded', async (t) => {
  const small = animatedPng(32);
  const kept = await prepareEmojiImage(small, 'image/png');
  t.equal(Buffer.compare(kept.data, small), 0, 'kept byte for byte');
  t.same(await imageInfo(kept.still!), { format: 'png', width: 32, height: 32, frames: 1 }, 'with a still image');
  t.same(await firstPixel(kept.still!), [255, 0, 0]);
  const big = await prepareEmojiImage(animatedPng(100), 'image/png');
  t.same(await imageInfo(big.data), { format: 'png', width: 64, height: 64, frames: 1 }, 'scaled down to its first frame, like the real server');
  t.equal(big.still, null);
});

t.test('a still image is scaled down to fit, keeping its shape; a small one is kept byte for byte', async (t) => {
  const big = await prepareEmojiImage(await solidPng(200, red), 'image/png');
  t.same(await imageInfo(big.data), { format: 'png', width: EMOJI_SIZE, height: EMOJI_SIZE, frames: 1 });
  t.equal(big.still, null);
  const wide = await sharp({ create: { width: 300, height: 100, channels: 3, background: red } }).jpeg().toBuffer();
  t.same(await imageInfo((await prepareEmojiImage(wide, 'image/jpeg')).data), { format: 'jpeg', width: 64, height: 21, frames: 1 });
  const small = await solidPng(20, red);
  const kept = await prepareEmojiImage(small, 'image/png');
  t.equal(Buffer.compare(kept.data, small), 0);
  t.equal(kept.still, null);
});

t.test('the stored image is in the declared format, whatever the bytes were', async (t) => {
  // The served content type is the declared one, so the bytes must match it (the real server converts too).
  const gifAsPng = await prepareEmojiImage(await animation(32), 'image/png');
  t.same(await imageInfo(gifAsPng.data), { format: 'png', width: 32, height: 32, frames: 1 }, 'PNG cannot animate here: the first frame');
  t.equal(gifAsPng.still, null, 'not animated, so no still image');
  const pngAsGif = await prepareEmojiImage(await solidPng(20, red), 'image/gif');
  t.match(await imageInfo(pngAsGif.data), { format: 'gif', frames: 1 });
});

t.test('bytes that are not an image we decode are refused with a 400', async (t) => {
  const refused = { code: 'BAD_REQUEST', status: 400, message: 'Could not decode image; did you upload an image file?' };
  await t.rejects(prepareEmojiImage(Buffer.from('definitely not an image'), 'image/png'), refused);
  await t.rejects(prepareEmojiImage(Buffer.alloc(0), 'image/gif'), refused);
  const png = await solidPng(200, red);
  await t.rejects(prepareEmojiImage(png.subarray(0, 60), 'image/png'), { code: 'BAD_REQUEST', status: 400 }, 'a truncated PNG');
  await t.rejects(prepareEmojiImage(await corruptPng(), 'image/png'), { code: 'BAD_REQUEST', status: 400, message: 'Image is corrupted or truncated' },
    'a PNG whose header reads but whose pixels do not');
  await t.rejects(prepareEmojiImage(await corruptPng(32), 'image/png'), { code: 'BAD_REQUEST', status: 400, message: 'Image is corrupted or truncated' },
    'also one small enough to be kept as uploaded');
  const svg = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="10" height="10"/></svg>');
  await t.rejects(prepareEmojiImage(svg, 'image/png'), refused, 'SVG is never parsed');
  await t.rejects(prepareEmojiImage(png, 'text/plain'), { code: 'BAD_REQUEST', message: 'Invalid image format' });
});

t.test('image bombs are refused before decoding', async (t) => {
  // 10000 x 10000 pixels of one colour compress to a few kilobytes.
  const bomb = await sharp({ create: { width: 10_000, height: 10_000, channels: 3, background: red } }).png({ compressionLevel: 9 }).toBuffer();
  await t.rejects(prepareEmojiImage(bomb, 'image/png'), { code: 'BAD_REQUEST', status: 400, message: 'Image size exceeds limit.' });
});
