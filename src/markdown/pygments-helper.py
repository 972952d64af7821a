"""Highlights code blocks with Pygments for the chat server (src/markdown/pygments-client.ts).

One JSON object per line on stdin: {"id": int, "lang": str, "code": str, "hl_lines": [int]}.
One JSON object per line on stdout: {"id": int, "html": str} or {"id": int, "error": str}, in request order.
The first line written is {"ready": true, "pygments": version}, once Pygments is imported.

The formatter options are those the real Zulip server's CodeHilite passes: CSS classes (no inline styles)
under "codehilite", a <code> element inside <pre>, no line numbers, and startinline so that PHP-family
lexers highlight code without an opening "<?php".
"""

import json
import sys

import pygments
from pygments import highlight
from pygments.formatters.html import HtmlFormatter
from pygments.lexers import get_lexer_by_name
from pygments.util import ClassNotFound

LEXER_OPTIONS = {"startinline": True}


def lexer_for(lang):
    try:
        return get_lexer_by_name(lang, **LEXER_OPTIONS)
    except ClassNotFound:
        return get_lexer_by_name("text", **LEXER_OPTIONS)


def answer(request):
    hl_lines = [line for line in request.get("hl_lines", []) if isinstance(line, int)]
    formatter = HtmlFormatter(cssclass="codehilite", wrapcode=True, linenos=False, hl_lines=hl_lines)
    return highlight(request["code"].strip("\n"), lexer_for(request["lang"]), formatter)


def main():
    sys.stdin.reconfigure(encoding="utf-8", errors="surrogatepass")
    out = sys.stdout
    out.write(json.dumps({"ready": True, "pygments": pygments.__version__}) + "\n")
    out.flush()
    while True:
        line = sys.stdin.readline()
        if not line:
            return
        request_id = None
        try:
            request = json.loads(line)
            request_id = request["id"]
            reply = {"id": request_id, "html": answer(request)}
        except Exception as error:  # one bad request must not end the helper
            reply = {"id": request_id, "error": type(error).__name__}
        out.write(json.dumps(reply) + "\n")
        out.flush()


if __name__ == "__main__":
    main()
