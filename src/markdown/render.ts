// The rendering pipeline: unified with remark-parse (Zulip syntax), Zulip's mdast transforms, remark-rehype,
// rehype-sanitize, Zulip's block layout and rehype-stringify.
import rehypeSanitize from 'rehype-sanitize';
import rehypeStringify from 'rehype-stringify';
import remarkRehype from 'remark-rehype';
import { unified, type Processor } from 'unified';
import type { Root } from 'mdast';
import type { VFile } from 'vfile';
import { parseWithBlocks } from './blocks.js';
import { applyInlineTransforms } from './inline.js';
import { rehypeZulipLayout } from './layout.js';
import { addImagePreviews, finishLinks } from './previews.js';
import { zulipSanitizeSchema } from './sanitize-schema.js';
import { escapeTextLikeZulip } from './serialize.js';
import { newRenderState, type RenderState } from './state.js';
import type { MdNode } from './tree.js';
import type { RenderContext, RenderResult } from './types.js';

declare module 'vfile' {
  interface DataMap {
    zulipRenderState: RenderState;
  }
}

function remarkZulipParser(this: Processor): void {
  this.parser = (document: string) => parseWithBlocks(document) as unknown as Root;
}

function remarkZulipTransforms() {
  return (tree: Root, file: VFile): void => {
    const state = file.data.zulipRenderState;
    if (!state) throw new Error('renderMarkdown: missing render state');
    const root = tree as unknown as MdNode;
    applyInlineTransforms(root, state);
    finishLinks(root, state);
    addImagePreviews(root, state);
  };
}

const processor = unified()
  .use(remarkZulipParser)
  .use(remarkZulipTransforms)
  .use(remarkRehype)
  .use(rehypeSanitize, zulipSanitizeSchema)
  .use(rehypeZulipLayout)
  .use(rehypeStringify, { characterReferences: { useNamedReferences: true } })
  .freeze();

export function renderMarkdown(content: string, ctx: RenderContext): RenderResult {
  const state = newRenderState(ctx);
  const file = processor.processSync({ value: content, data: { zulipRenderState: state } });
  return {
    html: escapeTextLikeZulip(String(file)),
    mentionedUserIds: [...state.mentionedUserIds],
    mentionedGroupIds: [...state.mentionedGroupIds],
    streamWildcard: state.streamWildcard,
    topicWildcard: state.topicWildcard,
    hasLink: state.hasLink,
    hasImage: state.hasImage,
    hasAttachment: state.hasAttachment,
    isMeMessage: content.startsWith('/me '),
    linkedUploadPaths: [...state.uploadPaths],
  };
}
