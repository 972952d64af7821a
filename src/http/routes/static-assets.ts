import type { FastifyInstance } from 'fastify';
import { loadSharp } from '../../services/sharp-loader.js';
import { EMOJI_DATA, EMOJI_DATA_PATH, ORGANIZATION_ICON_PATH, ORGANIZATION_LOGO_PATH } from '../../domain/realm/server-catalogs.js';
import { ZULIP_EMOJI_IMAGE_PATH } from '../../emoji/catalogue.js';

// The default organization logo and icon: a plain speech bubble (this server has no logo upload).
const LOGO_SVG = `<svg xmlns="http://www.w3.org/2000/svg" width="128" height="128" viewBox="0 0 128 128">
<rect x="8" y="12" width="112" height="80" rx="16" fill="#6492fe"/><path d="M36 92 L36 116 L60 92 Z" fill="#6492fe"/>
<rect x="28" y="36" width="72" height="8" rx="4" fill="#fff"/><rect x="28" y="56" width="48" height="8" rx="4" fill="#fff"/></svg>`;

// The `:zulip:` emoji that rendered messages point at: the same bubble, square.
const ZULIP_EMOJI_SVG = `<svg xmlns="http://www.w3.org/2000/svg" width="64" height="64" viewBox="0 0 64 64">
<circle cx="32" cy="32" r="32" fill="#6492fe"/><path d="M18 18 H46 L24 42 H46 V46 H18 L40 22 H18 Z" fill="#fff"/></svg>`;

/** Public files that /register's URLs and rendered messages point at: the Unicode emoji data, the `:zulip:` emoji, and the organization's default logo and icon. */
export async function staticAssetRoutes(app: FastifyInstance) {
  // The PNGs are drawn at their first request, not at start: few processes are ever asked for them.
  const png = (svg: string) => {
    let drawn: Promise<Buffer> | undefined;
    return () => (drawn ??= loadSharp().then((sharp) => sharp(Buffer.from(svg)).png().toBuffer()));
  };
  const files: Array<[string, string, () => string | Promise<Buffer>]> = [
    [EMOJI_DATA_PATH, 'application/json', () => EMOJI_DATA],
    [ZULIP_EMOJI_IMAGE_PATH, 'image/png', png(ZULIP_EMOJI_SVG)],
    [ORGANIZATION_LOGO_PATH, 'image/svg+xml', () => LOGO_SVG],
    [ORGANIZATION_ICON_PATH, 'image/png', png(LOGO_SVG)],
  ];
  for (const [url, type, body] of files) {
    app.route({
      method: 'GET',
      url,
      config: { auth: 'none', limited: true },
      handler: async (_request, reply) =>
        reply.header('Content-Type', type).header('X-Content-Type-Options', 'nosniff').header('Cache-Control', 'public, max-age=86400').send(await body()),
    });
  }
}
