import { renderMarkdown, emptyRenderContext } from './src/markdown/index.ts';
const ctx = emptyRenderContext('http://zulip.testserver');
for (const s of process.argv.slice(2)) console.log(JSON.stringify(renderMarkdown(s, ctx).html));
