"""Messages render as safe Markdown (trees.markdown).

The rules:

- CommonMark with tables and strikethrough: fenced code keeps every space and
  newline, in ``<pre><code>``; a language Pygments knows is highlighted with
  CSS classes (``language-<name>`` on the code, token classes on spans), never
  inline styles; a language it does not know is shown plain and escaped;
  tables, lists and inline code render as such; a table cell's alignment is a
  class, not a style.
- Nothing in a message becomes markup or a script: raw HTML (inline or a
  block) is text; links go only to http, https and mailto addresses, each
  with ``rel="noopener nofollow ugc"``; any other target (``javascript:``,
  ``data:``, ``vbscript:``, a path on this site) stays the text it was written
  as, in links and autolinks alike; images are not fetched (they stay links).
- ASCII prose with no Markdown in it takes a shortcut, with exactly the HTML the
  full renderer gives; its HTML is not stored (it is cheaper to make again).
- A 50,000-character message (hundreds of code blocks and tables) renders in well
  under a second.
"""

from __future__ import annotations

import random
import re
import time
from html.parser import HTMLParser

import pytest

from trees import markdown
from trees.markdown import message_html

PYTHON_REPLY = """Here is the function:

```python
def total(rows):
    if not rows:
        return 0
    return sum(row["n"] for row in rows)
```
"""


class Elements(HTMLParser):
    """Every start tag with its attributes, for checking what HTML a message became."""

    def __init__(self, html: str) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def named(self, tag: str) -> list[dict[str, str | None]]:
        return [attrs for name, attrs in self.tags if name == tag]


def full_render(text: str) -> str:
    """What markdown-it and nh3 make of ``text``, without the shortcut for prose."""
    return markdown._cleaner().clean(markdown._PARSER.render(text))


def code_text(html: str) -> str:
    """The text of the first ``<pre>``, as a browser reads it (tags dropped, entities decoded)."""
    inner = re.search(r"<pre[^>]*>(.*?)</pre>", html, re.S).group(1)
    text = re.sub(r"<[^>]+>", "", inner)
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", '"').replace("&amp;", "&")


def test_fenced_code_keeps_its_indentation():
    html = message_html(PYTHON_REPLY)
    assert code_text(html) == (
        'def total(rows):\n    if not rows:\n        return 0\n    return sum(row["n"] for row in rows)\n'
    )


def test_a_known_language_is_highlighted_with_classes():
    html = message_html(PYTHON_REPLY)
    elements = Elements(html)
    assert elements.named("pre") == [{"class": "highlight", "tabindex": "0"}]
    assert elements.named("code") == [{"class": "language-python"}]
    assert {"k", "nf"} <= {attrs["class"] for attrs in elements.named("span")}
    assert "style" not in html


def test_a_language_is_named_by_its_lexer_whatever_alias_was_written():
    assert Elements(message_html("```PY3\nx = 1\n```")).named("code") == [{"class": "language-python"}]


def test_an_unknown_language_is_plain_and_escaped():
    html = message_html("```nosuchlanguage\nif a < b && c:\n    pass\n```")
    assert html == '<pre tabindex="0"><code>if a &lt; b &amp;&amp; c:\n    pass\n</code></pre>\n'


def test_an_indented_code_block_is_plain_code():
    assert (
        message_html("Run:\n\n    make test\n")
        == '<p>Run:</p>\n<pre tabindex="0"><code>make test\n</code></pre>\n'
    )


def test_a_very_long_code_block_is_shown_plain():
    code = "x = 1\n" * (markdown.MAX_HIGHLIGHTED // 6 + 1)
    html = message_html(f"```python\n{code}```")
    assert html == f'<pre tabindex="0"><code>{code}</code></pre>\n'


def test_tables_render_with_alignment_as_classes():
    html = message_html("| name | n |\n|:-----|--:|\n| a | 1 |\n| b | 2 |\n")
    elements = Elements(html)
    assert [tag for tag, _ in elements.tags] == [
        "table", "thead", "tr", "th", "th", "tbody", "tr", "td", "td", "tr", "td", "td",
    ]  # fmt: skip
    assert elements.named("th") == [{"class": "align-left"}, {"class": "align-right"}]
    assert "style" not in html


def test_lists_render_as_lists():
    html = message_html("- one\n- two\n\n3. three\n4. four\n")
    assert html == (
        '<ul>\n<li>one</li>\n<li>two</li>\n</ul>\n<ol start="3">\n<li>three</li>\n<li>four</li>\n</ol>\n'
    )


def test_inline_code_emphasis_and_strikethrough():
    html = message_html("Use `x < y`, **not** *this* or ~~that~~.")
    assert html == "<p>Use <code>x &lt; y</code>, <strong>not</strong> <em>this</em> or <s>that</s>.</p>\n"


def test_links_get_rel_noopener_nofollow_ugc():
    html = message_html('See [the docs](https://example.org/a?b=1 "Docs") or <mailto:help@example.org>.')
    assert Elements(html).named("a") == [
        {"href": "https://example.org/a?b=1", "title": "Docs", "rel": "noopener nofollow ugc"},
        {"href": "mailto:help@example.org", "rel": "noopener nofollow ugc"},
    ]


@pytest.mark.parametrize(
    "text",
    [
        "<script>alert(1)</script>",
        "Hello <script>alert(1)</script> there",
        "<img src=x onerror=alert(1)>",
        '<a href="javascript:alert(1)">x</a>',
        "<div>\n<iframe src=https://example.org></iframe>\n</div>",
        "<!-- a comment --><style>body{display:none}</style>",
        '<svg onload="alert(1)"></svg>',
    ],
)
def test_raw_html_is_text(text):
    html = message_html(text)
    assert Elements(html).tags in ([("p", {})], [])
    assert "<" + text[1:] not in html
    assert "&lt;" in html


@pytest.mark.parametrize(
    "text",
    [
        "[x](javascript:alert(1))",
        "[x](JaVaScRiPt:alert(1))",
        "[x]( javascript:alert(1))",
        "[x](javascript&#58;alert(1))",
        "[x](&#106;avascript:alert(1))",
        "<javascript:alert(1)>",
        "[x](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
        "[x](vbscript:msgbox(1))",
        "[x](/projects/)",
        "[x][ref]\n\n[ref]: javascript:alert(1)",
        "![x](javascript:alert(1))",
    ],
)
def test_links_to_anything_but_web_and_mail_addresses_stay_text(text):
    html = message_html(text)
    assert Elements(html).named("a") == []
    assert "href" not in html


def test_images_are_not_fetched():
    html = message_html("![tracking pixel](https://example.org/pixel.png)")
    elements = Elements(html)
    assert elements.named("img") == []
    assert elements.named("a") == [{"href": "https://example.org/pixel.png", "rel": "noopener nofollow ugc"}]


def test_an_info_string_cannot_add_attributes():
    html = message_html('```python" onmouseover="alert(1)\nx\n```')
    assert "onmouseover" not in html.split("<code>")[0]
    assert Elements(html).named("code") == [{}]


@pytest.mark.parametrize(
    "text",
    [
        "",
        "Hello there.",
        'Hello, world! Isn\'t it "fine"? (yes) 100% / $5 @me a=b c+d e-f',
        "First paragraph.\nSame paragraph.\n\nSecond paragraph.",
        "\n\nLeading and trailing blank lines.\n\n\n",
    ],
)
def test_prose_takes_the_shortcut(text):
    assert markdown.is_prose(text)
    assert markdown.prose_html(text) == full_render(text)


@pytest.mark.parametrize(
    "text",
    [
        "- a list",
        "1. a list",
        "Ünïcödé, which goes the long way",
        "2) a list",
        "+ a list",
        "Title\n===",
        "Title\n---",
        " indented",
        "hard  \nbreak",
    ],
)
def test_text_that_opens_a_block_does_not_take_the_shortcut(text):
    assert not markdown.is_prose(text)


def test_the_shortcut_agrees_with_the_renderer_on_random_text():
    """Random text from an alphabet that mixes prose with everything a block may start with:
    wherever the shortcut answers, it answers what the full renderer does."""
    rng = random.Random(18)
    alphabet = ["word", "Ünï", "42", " ", " ", "\n", "\n\n", ",", ".", "!", "?", "'", '"', "(", ")", "-", "+", "=", "1.", "3)", "/", "%", "$", "@", ":", ";"]  # fmt: skip
    shortcuts = 0
    for _ in range(3000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 30)))
        if markdown.is_prose(text):
            shortcuts += 1
            assert markdown.prose_html(text) == full_render(text), repr(text)
    assert shortcuts > 300


def test_text_that_is_not_prose_stays_text_even_on_the_shortcut():
    """prose_html is only ever given prose; given anything else by mistake, it still escapes."""
    assert (
        markdown.prose_html("<script>alert(1)</script>") == "<p>&lt;script&gt;alert(1)&lt;/script&gt;</p>\n"
    )


def test_only_what_is_not_prose_is_stored():
    assert markdown.stored_html("Plain words.") is None
    assert markdown.stored_html("Some *words*.") == "<p>Some <em>words</em>.</p>\n"


def test_a_long_message_renders_quickly():
    block = "Some **bold** text with `code` and [a link](https://example.org).\n\n```python\nfor i in range(3):\n    print(i)\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n"
    text = (block * (50_000 // len(block) + 1))[:50_000]
    started = time.perf_counter()
    html = message_html(text)
    # About 0.2 s on an idle machine; the bound is loose for busy CI machines, and still catches
    # a renderer that grows worse than linearly (that would take minutes).
    assert time.perf_counter() - started < 5.0
    assert html.count("<table ") > 100


def test_the_stylesheet_has_the_current_highlighting_classes():
    """static/trees/markdown.css carries Pygments' rules for the classes the renderer writes."""
    from pathlib import Path

    from pygments.formatters import HtmlFormatter

    css = (Path(__file__).resolve().parents[2] / "static/trees/markdown.css").read_text()
    rules = HtmlFormatter(style="default").get_style_defs(".highlight").splitlines()
    assert [rule for rule in rules if rule.startswith(".highlight") and rule not in css] == []
