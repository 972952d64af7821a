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

function linksIn(node: MdNode): MdNode[] {
  if (node.type === 'link') return [node];
  return (node.children ?? []).flatMap(linksIn);
}

/** After each paragraph that links to images, the images themselves (inside list items, in the item). */
export function addImagePreviews(tree: MdNode, state: RenderState): void {
  const visit = (parent: MdNode): void => {
    if (!parent.children) return;
    const next: MdNode[] = [];
    for (const child of parent.children) {
      visit(child);
      next.push(child);
      if (child.type === 'paragraph') {
        const seen = new Set<string>();
        for (const link of linksIn(child)) {
          if (seen.has(link.url ?? '')) continue;
          seen.add(link.url ?? '');
          const preview = previewFor(link, state);
          if (preview) next.push(preview);
        }
      }
    }
    parent.children = next;
  };
  visit(tree);
}
