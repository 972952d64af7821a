// The rendering pipeline: unified with remark-parse (Zulip syntax), Zulip's mdast transforms, remark-rehype,
// rehype-sanitize, Zulip's block layout and rehype-stringify.
import rehypeStringify from 'rehype-stringify';
import remarkRehype from 'remark-rehype';
import { unified, type Processor } from 'unified';
import type { Root } from 'mdast';
import type { VFile } from 'vfile';
import { parseWithBlocks } from './blocks.js';
import { placeCodeBlocks, type CodeBlockSite } from './code-highlight.js';
import { applyInlineTransforms } from './inline.js';
import type { SplitOptions } from './long-tables.js';
import { zulipElementToHast } from './element-to-hast.js';
import { inlineCodeToHast } from './inline-code.js';
import { listItemToHast } from './lists.js';
import { rehypeZulipLayout } from './layout.js';
import { addImagePreviews, finishLinks } from './previews.js';
import { MarkdownRenderingError, MAX_TREE_DEPTH, newRenderBudget, spend, treeDepth } from './limits.js';
import { escapeTextLikeZulip } from './serialize.js';
import { renderPlainText } from './plain-text.js';
import { newRenderState, type RenderState } from './state.js';
import type { MdNode } from './tree.js';
import { rehypeSanitizeKeepingTrusted, trustedFragmentHandlers, zulipHtmlOptions } from './trusted-html.js';
import type { RenderContext, RenderResult } from './types.js';

declare module 'vfile' {
  interface DataMap {
    zulipRenderState: RenderState;
    zulipTableOptions?: SplitOptions;
  }
}

function remarkZulipParser(this: Processor): void {
  this.parser = (document: string, file: VFile) => {
    const state = renderStateOf(file);
    const tree = parseWithBlocks(document, {
      budget: state.budget,
      codeBlocks: state.codeBlocks,
      defaultLanguage: state.ctx.defaultCodeBlockLanguage || undefined,
      tables: file.data.zulipTableOptions,
    });
    // Each parsed document is bounded; quotes inside quotes add up, so the whole is checked again.
    if (treeDepth(tree) > MAX_TREE_DEPTH) throw new MarkdownRenderingError();
    return tree as unknown as Root;
  };
}

function renderStateOf(file: VFile): RenderState {
  const state = file.data.zulipRenderState;
  if (!state) throw new Error('renderMarkdown: missing render state');
  return state;
}

function remarkZulipTransforms() {
  return (tree: Root, file: VFile): void => {
    const state = renderStateOf(file);
    const root = tree as unknown as MdNode;
    applyInlineTransforms(root, state);
    finishLinks(root, state);
    addImagePreviews(root, state);
    spend(state.budget, 0);
  };
}

const processor = unified()
  .use(remarkZulipParser)
  .use(remarkZulipTransforms)
  .use(remarkRehype, {
    handlers: { ...trustedFragmentHandlers, listItem: listItemToHast, inlineCode: inlineCodeToHast, zulipElement: zulipElementToHast, zulipContainer: zulipElementToHast },
  })
  .use(rehypeSanitizeKeepingTrusted)
  .use(rehypeZulipLayout)
  // Raw nodes reaching the serializer are trusted fragments only: the sanitizer removes every other one.
  .use(rehypeStringify, { ...zulipHtmlOptions, allowDangerousHtml: true })
  .freeze();

/** A render and the code blocks in it that Pygments can highlight (see code-highlight.ts). */
export interface RenderOutput {
  result: RenderResult;
  codeBlocks: CodeBlockSite[];
}

/** Throws MarkdownRenderingError (400 "Unable to render message") for what it cannot render within its bounds. */
export function renderMarkdown(content: string, ctx: RenderContext): RenderResult {
  return renderMarkdownWithCodeBlocks(content, ctx).result;
}

/** renderMarkdown, also saying where the code blocks to highlight are. */
export function renderMarkdownWithCodeBlocks(content: string, ctx: RenderContext): RenderOutput {
  return renderIfPlain(content, ctx) ?? renderParsed(content, ctx);
}

/** The render of plain text without parsing (plain-text.ts), or undefined when the content needs the parser. */
export function renderIfPlain(content: string, ctx: RenderContext): RenderOutput | undefined {
  const plain = renderPlainText(content, ctx);
  if (plain === undefined) return undefined;
  return { result: resultOf(plain, content, newRenderState(ctx, newRenderBudget(content))), codeBlocks: [] };
}

/**
 * The full pipeline, whatever the content (plain-text.ts's fast path is checked against it). `tables` is for
 * tests that compare long tables' fast path with the parse it stands for (long-tables.ts).
 */
export function renderParsed(content: string, ctx: RenderContext, tables?: SplitOptions): RenderOutput {
  const state = newRenderState(ctx, newRenderBudget(content));
  let placed: ReturnType<typeof placeCodeBlocks>;
  try {
    const html = escapeTextLikeZulip(String(processor.processSync({ value: content, data: { zulipRenderState: state, zulipTableOptions: tables } })));
    placed = placeCodeBlocks(html, state.codeBlocks);
  } catch (error) {
    // As on the real server, a renderer failure refuses the message instead of failing the request.
    throw error instanceof MarkdownRenderingError ? error : new MarkdownRenderingError(error);
  }
  return { result: resultOf(placed.html, content, state), codeBlocks: placed.sites };
}

function resultOf(html: string, content: string, state: RenderState): RenderResult {
  return {
    html,
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
