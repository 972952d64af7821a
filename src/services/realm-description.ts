import type { RealmRow } from '../read/realm.js';
import { renderDescription } from './channels.js';
import type { ServiceContext } from './context.js';
import { RENDER_TABLES } from './render-context.js';

interface Rendered {
  version: number;
  description: string;
  html: string;
}

// Per database, then per realm: GET /server_settings needs no login, so it must not render each time.
const caches = new WeakMap<object, Map<number, Rendered>>();

/**
 * The organization's description as HTML, rendered like a message (the real server's
 * get_realm_rendered_description), again only when it or what rendering reads has changed.
 */
export async function renderedRealmDescription(ctx: ServiceContext, realm: RealmRow): Promise<string> {
  const description = String(realm.properties.description ?? '');
  const version = ctx.tablesVersion(RENDER_TABLES);
  let cache = caches.get(ctx.db);
  if (!cache) caches.set(ctx.db, (cache = new Map()));
  const hit = cache.get(realm.id);
  if (hit && hit.version === version && hit.description === description) return hit.html;
  const html = await renderDescription(ctx, description, realm);
  cache.set(realm.id, { version, description, html });
  return html;
}
