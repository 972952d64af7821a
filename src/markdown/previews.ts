// Link bookkeeping (has:link, has:attachment, uploaded paths) and inline previews of linked images.
import type { RenderState } from './state.js';
import { h, hastElement, text, toPlainText, type MdNode } from './tree.js';
import { isImageUrl, isVideoUrl, safeHref, uploadPath } from './urls.js';

/** Finalizes every link's href and text, and records what the message links to. */
export function finishLinks(tree: MdNode, state: RenderState): void {
  const visit = (node: MdNode): void => {
    if (node.type === 'link') {
      const href = safeHref(node.url ?? '', state.ctx.realmUrl) ?? '';
      node.url = href;
      node.title = null;
      if (toPlainText(node).trim() === '' && !(node.children ?? []).some((c) => c.type !== 'text')) node.children = [text(href)];
      state.hasLink = true;
      const path = uploadPath(href, state.ctx.realmUrl);
      if (path) {
        state.hasAttachment = true;
        state.uploadPaths.add(path);
      }
    }
    for (const child of node.children ?? []) visit(child);
  };
  visit(tree);
}

function previewFor(link: MdNode, state: RenderState): MdNode | undefined {
  const href = link.url ?? '';
  const label = toPlainText(link);
  const titled = label !== href ? { title: label } : {};
  const isUpload = uploadPath(href, state.ctx.realmUrl) !== undefined;
  if (isImageUrl(href)) {
    state.hasImage = true;
    // Uploads are served as they are; other images go through the server's thumbnailing proxy.
    const img = isUpload
      ? h('img', { src: href })
      : h('img', {
          dataSrcFullsize: `/thumbnail?url=${encodeURIComponent(href)}&size=full`,
          src: `/thumbnail?url=${encodeURIComponent(href)}&size=thumbnail`,
        });
    return hastElement('div', { className: ['message_inline_image'] }, [h('a', { href, ...titled }, [img])]);
  }
  if (isUpload && isVideoUrl(href)) {
    return hastElement('div', { className: ['message_inline_image', 'message_inline_video'] }, [
      h('a', { href, ...titled }, [h('video', { preload: 'metadata', src: href })]),
    ]);
  }
  return undefined;
}

/** Unique links the real server would preview at most; past it, it previews none. */
export const INLINE_PREVIEW_LIMIT = 24;

interface FoundLink {
  link: MdNode;
  /** The paragraph or list item the link sits in directly, if it does. */
  parent: MdNode | undefined;
}

/** Links outside quotes (the real server previews nothing quoted), in document order. */
function previewableLinks(node: MdNode, parent: MdNode | undefined, out: FoundLink[]): FoundLink[] {
  if (node.type === 'blockquote') return out;
  for (const child of node.children ?? []) {
    if (child.type === 'link') out.push({ link: child, parent });
    const direct = child.type === 'paragraph' || child.type === 'listItem' ? child : undefined;
    previewableLinks(child, direct, out);
  }
  return out;
}

const isBlankText = (node: MdNode): boolean => node.type === 'text' && (node.value ?? '').trim() === '';

/**
 * Image (and uploaded video) previews where the real server puts them: after the paragraph the link is in
 * (after that paragraph's other previews), at the end of the list item for a link in a tight item's text,
 * and at the end of the message for a link inside other markup (bold, a heading, a table). Each URL is
 * previewed once; a paragraph (or tight item text) that is nothing but the bare link is replaced by its preview.
 */
export function addImagePreviews(tree: MdNode, state: RenderState): void {
  const found = previewableLinks(tree, undefined, []);
  const unique = new Set(found.map((f) => f.link.url ?? ''));
  if (found.length === 0 || unique.size > INLINE_PREVIEW_LIMIT) return;
  const after = new Map<MdNode, MdNode[]>();
  const atEnd: MdNode[] = [];
  const removed = new Set<MdNode>();
  const done = new Set<string>();
  // The list item a paragraph belongs to when the item is tight (its text sits directly in the <li>).
  const tightItemOf = new Map<MdNode, MdNode>();
  const mapItems = (node: MdNode): void => {
    for (const child of node.children ?? []) {
      if (node.type === 'listItem' && !node.spread && child.type === 'paragraph') tightItemOf.set(child, node);
      mapItems(child);
    }
  };
  mapItems(tree);
  for (const { link, parent } of found) {
    const url = link.url ?? '';
    if (done.has(url)) continue;
    done.add(url);
    const preview = previewFor(link, state);
    if (!preview) continue;
    const bare = toPlainText(link) === url;
    const item = parent && tightItemOf.get(parent);
    if (parent?.type === 'paragraph' && item) {
      (after.get(item) ?? after.set(item, []).get(item)!).push(preview);
      const siblings = parent.children ?? [];
      if (bare && siblings[0] === link) removed.add(link);
    } else if (parent?.type === 'paragraph') {
      (after.get(parent) ?? after.set(parent, []).get(parent)!).push(preview);
      const others = (parent.children ?? []).filter((c) => c !== link);
      if (bare && others.every(isBlankText) && (parent.children ?? []).at(-1) === link) removed.add(parent);
    } else {
      atEnd.push(preview);
    }
  }
  const place = (node: MdNode): void => {
    if (!node.children) return;
    const next: MdNode[] = [];
    for (const child of node.children) {
      place(child);
      if (!removed.has(child)) next.push(child);
      if (child.type !== 'listItem') next.push(...(after.get(child) ?? []));
    }
    if (node.type === 'listItem') next.push(...(after.get(node) ?? []));
    node.children = next;
  };
  place(tree);
  (tree.children ??= []).push(...atEnd);
}
