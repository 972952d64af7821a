import type sharpModule from 'sharp';

let loading: Promise<typeof sharpModule> | undefined;

/** sharp (libvips) is loaded at first use: loading it costs about half a second, and most processes never touch an image. */
export function loadSharp(): Promise<typeof sharpModule> {
  loading ??= import('sharp').then((module) => module.default);
  return loading;
}
