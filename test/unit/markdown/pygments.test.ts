// The Pygments helper client and the highlighting step: the real helper highlights, and whatever goes wrong
// with it (off, missing, slow, crashing, misbehaving) leaves code blocks plain and safe, never an error.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import t from 'tap';
import { codeHeader } from '../../../src/markdown/code-header.js';
import { highlightCodeBlocks } from '../../../src/markdown/code-highlight.js';
import { PygmentsClient, type PygmentsClientOptions } from '../../../src/markdown/pygments-client.js';
import { renderMarkdownWithCodeBlocks } from '../../../src/markdown/render.js';
import { testContext } from './fixtures.js';

// A stand-in helper: answers by the code it is sent ("crash", "hang", "evil", "slow-start"), else a token span.
const fakeScript = path.join(mkdtempSync(path.join(tmpdir(), 'pygments-fake-')), 'fake-helper.py');
writeFileSync(fakeScript, `
import json, os, sys, time
print(json.dumps({"ready": True}), flush=True)
for line in sys.stdin:
    r = json.loads(line)
    code = r["code"]
    if code == "crash":
        os._exit(3)
    if code == "hang":
        time.sleep(30)
    if code.startswith("slow"):
        time.sleep(0.05)
    if code == "evil":
        inner = '<script>alert(1)</script><span class="k" onclick="x()">if</span><img src=x onerror=alert(1)>' \\
            '<a href="javascript:alert(1)">a</a><span class="evil k" style="color:red">b</span><b>c</b>'
    else:
        inner = '<span class="n">' + code + '</span>'
    html = '<div class="codehilite"><pre><span></span><code>' + inner + '\\n</code></pre></div>\\n'
    print(json.dumps({"id": r["id"], "html": html}), flush=True)
`);

const logs: string[] = [];
function client(options: Partial<PygmentsClientOptions> = {}): PygmentsClient {
  const made = new PygmentsClient({ python: 'python3', log: (line) => logs.push(line), ...options });
  t.teardown(() => made.close());
  return made;
}

/** Renders `content` and highlights it with `pygments`. */
async function render(content: string, pygments: PygmentsClient): Promise<string> {
  const { result, codeBlocks } = renderMarkdownWithCodeBlocks(content, testContext());
  return highlightCodeBlocks(result.html, codeBlocks, pygments);
}

const plainPython = '<div class="codehilite" data-code-language="Python"><pre><span></span><code>def f():\n    pass\n</code></pre></div>';

t.test('the real helper highlights with the formatter options of the real server', async (t) => {
  const pygments = client();
  t.equal(
    await render('```php\n$a = 1;\n```', pygments),
    '<div class="codehilite" data-code-language="PHP"><pre><span></span><code><span class="nv">$a</span> <span class="o">=</span> <span class="mi">1</span><span class="p">;</span>\n</code></pre></div>',
    'startinline: PHP without <?php',
  );
  t.equal(
    await render('```\n#!python hl_lines="2"\nx = 1\n```', pygments),
    '<div class="codehilite"><pre><span></span><code><span class="ch">#!python hl_lines=&quot;2&quot;</span>\n' +
      '<span class="hll"><span class="n">x</span> <span class="o">=</span> <span class="mi">1</span>\n</span></code></pre></div>',
    'hl_lines from the header line; the header stays in a fenced block',
  );
  t.equal(await render('```inventedlanguage\nx\n```', pygments), '<div class="codehilite" data-code-language="inventedlanguage"><pre><span></span><code>x\n</code></pre></div>');
});

t.test('the header line rule', async (t) => {
  t.same(codeHeader(':::python\nprint(1)', true), { lang: 'python', hlLines: [], code: ':::python\nprint(1)' }, 'fenced: kept');
  t.same(codeHeader(':::python\nprint(1)', false), { lang: 'python', hlLines: [], code: 'print(1)' }, 'indented: dropped');
  t.same(codeHeader('#!/usr/bin/env python3\nprint(1)', false), { lang: 'python3', hlLines: [], code: '#!/usr/bin/env python3\nprint(1)' }, 'a path keeps it');
  t.same(codeHeader('#!Python hl_lines="1 3"\nx', true)?.hlLines, [1, 3]);
  t.same(codeHeader('#!python hl_lines="1 x"\nx', true)?.hlLines, [], 'lines that are not all numbers mark none');
  t.equal(codeHeader(' :::python\nx', true), undefined, 'only at the start of the first line');
  t.equal(codeHeader(':python\nx', true), undefined, 'two colons at least');
  t.equal(codeHeader('x\n:::python', true), undefined);
  const pygments = client();
  t.equal(await render('    :::python\n    print(1)', pygments),
    '<div class="codehilite"><pre><span></span><code><span class="nb">print</span><span class="p">(</span><span class="mi">1</span><span class="p">)</span>\n</code></pre></div>',
    'indented code: the header names the lexer and goes');
  t.equal(await render('```\n#!\nx\n```', pygments), '<div class="codehilite"><pre><span></span><code>#!\nx\n</code></pre></div>', 'no language named: plain');
});

t.test('PYGMENTS_PYTHON=off: plain code, nothing started', async (t) => {
  const pygments = client({ python: 'off' });
  t.equal(pygments.enabled, false);
  t.equal(await pygments.highlight({ lang: 'python', code: 'x' }), undefined);
  t.equal(await render('```python\ndef f():\n    pass\n```', pygments), plainPython);
});

t.test('a missing interpreter: plain code, logged once, no error', async (t) => {
  logs.length = 0;
  const pygments = client({ python: '/nonexistent/python3', restartDelayMs: 0 });
  t.equal(await render('```python\ndef f():\n    pass\n```', pygments), plainPython);
  t.equal(await render('```python\ndef f():\n    pass\n```', pygments), plainPython);
  t.equal(logs.length, 1, 'logged once');
  t.match(logs[0], /could not start/);
});

t.test('Python without the helper\'s imports (exits at once): plain code', async (t) => {
  logs.length = 0;
  const broken = path.join(path.dirname(fakeScript), 'broken.py');
  writeFileSync(broken, 'import no_such_module_for_pygments\n');
  const pygments = client({ script: broken });
  t.equal(await pygments.highlight({ lang: 'python', code: 'x' }), undefined);
  t.match(logs[0], /exited \(code 1\): ModuleNotFoundError/);
});

t.test('an answer past the time bound: plain code, the helper replaced', async (t) => {
  logs.length = 0;
  const pygments = client({ script: fakeScript, answerTimeoutMs: 200, restartDelayMs: 0 });
  const started = Date.now();
  t.equal(await pygments.highlight({ lang: 'python', code: 'hang' }), undefined);
  const waited = Date.now() - started;
  t.ok(waited >= 190 && waited < 3_000, `gave up after ${waited} ms`);
  t.match(logs, [/no answer within 200 ms/]);
  t.match(await pygments.highlight({ lang: 'python', code: 'ok' }), /<span class="n">ok<\/span>/, 'a new helper answers');
});

t.test('a burst queued behind one another is progress: each answer resets the bound', async (t) => {
  logs.length = 0;
  const pygments = client({ script: fakeScript, answerTimeoutMs: 200 });
  const codes = Array.from({ length: 10 }, (_, i) => `slow${i}`);
  const started = Date.now();
  const answers = await Promise.all(codes.map((code) => pygments.highlight({ lang: 'python', code })));
  t.ok(Date.now() - started >= 450, 'the burst took longer than the bound');
  answers.forEach((html, i) => t.match(html, new RegExp(`slow${i}`), `block ${i} highlighted`));
  t.same(logs, [], 'no helper was taken as stuck');
});

t.test('a crash mid-request: every request in flight falls back; a later one restarts it after the back-off', async (t) => {
  logs.length = 0;
  const pygments = client({ script: fakeScript, restartDelayMs: 300 });
  t.match(await pygments.highlight({ lang: 'python', code: 'first' }), /first/);
  const inFlight = await Promise.all([
    pygments.highlight({ lang: 'python', code: 'crash' }),
    pygments.highlight({ lang: 'python', code: 'after' }),
  ]);
  t.same(inFlight, [undefined, undefined]);
  t.match(logs, [/exited \(code 3\)/]);
  t.equal(await pygments.highlight({ lang: 'python', code: 'too soon' }), undefined, 'not restarted during the back-off');
  await new Promise((resolve) => setTimeout(resolve, 350));
  t.match(await pygments.highlight({ lang: 'python', code: 'later' }), /later/, 'restarted');
});

t.test('many concurrent blocks: each gets its own answer', async (t) => {
  const pygments = client();
  const blocks = Array.from({ length: 300 }, (_, i) => `\`\`\`python\nv${i} = ${i}\n\`\`\``);
  const html = await render(blocks.join('\n\n'), pygments);
  for (let i = 0; i < 300; i += 37) t.ok(html.includes(`<span class="n">v${i}</span> <span class="o">=</span> <span class="mi">${i}</span>`), `block ${i}`);
  t.equal(html.match(/<span class="n">v\d+<\/span>/g)?.length, 300);
  const answers = await Promise.all(Array.from({ length: 100 }, (_, i) => pygments.highlight({ lang: 'js', code: `f${i}()` })));
  answers.forEach((answer, i) => t.ok(answer?.includes(`>f${i}<`)) || t.fail(`answer ${i}: ${answer}`));
});

t.test('a code block as large as a message can be is highlighted without holding the event loop', async (t) => {
  const pygments = client();
  await pygments.highlight({ lang: 'python', code: 'warm = 1' });
  const line = 'result = compute(alpha, "beta", 3.14)  # note\n';
  const code = line.repeat(Math.floor(9_990 / line.length));
  let longestGap = 0;
  let last = Date.now();
  const ticker = setInterval(() => {
    longestGap = Math.max(longestGap, Date.now() - last);
    last = Date.now();
  }, 5);
  const started = Date.now();
  const { result, codeBlocks } = renderMarkdownWithCodeBlocks(`\`\`\`python\n${code}\`\`\``, testContext());
  last = Date.now();
  const html = await highlightCodeBlocks(result.html, codeBlocks, pygments);
  clearInterval(ticker);
  t.ok(Date.now() - started < 2_000, `highlighted in ${Date.now() - started} ms`);
  t.equal(html.match(/<span class="nf">compute<\/span>|<span class="n">compute<\/span>/g)?.length, code.split('\n').length - 1);
  t.ok(longestGap < 200, `longest event loop gap while waiting: ${longestGap} ms`);
});

t.test('HTML the helper should not send is stripped to token spans and text', async (t) => {
  const pygments = client({ script: fakeScript });
  const { result, codeBlocks } = renderMarkdownWithCodeBlocks('```python\nevil\n```', testContext());
  const html = await highlightCodeBlocks(result.html, codeBlocks, pygments);
  t.equal(html, '<div class="codehilite" data-code-language="Python"><pre><span></span><code><span class="k">if</span>a<span class="k">b</span>c\n</code></pre></div>');
  const shapeless = new PygmentsClient({ python: 'python3', script: fakeScript });
  t.teardown(() => shapeless.close());
  t.equal(
    await highlightCodeBlocks('<div class="codehilite"><pre><span></span><code>x\n</code></pre></div>', [{ lang: 'python', code: '</code></pre><script>x</script>', start: 44, end: 46 }], shapeless),
    '<div class="codehilite"><pre><span></span><code>x\n</code></pre></div>',
    'an answer whose markup closes the code block early is not used',
  );
});
