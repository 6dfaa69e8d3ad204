"""Messages as safe HTML: chatbot replies are Markdown, and annotators judge them as read.

``message_html(text)`` renders CommonMark (plus tables and strikethrough) with
markdown-it-py, highlights fenced code with Pygments (CSS classes, never inline
styles, so the Content-Security-Policy stays strict), and passes the result
through nh3 with an explicit allow-list. Two layers, each enough alone:

- markdown-it runs with ``html=False``: raw HTML in a message is text, never
  markup; it refuses ``javascript:``, ``vbscript:``, ``file:`` and ``data:``
  link targets; images are turned off (an image would make the annotator's
  browser fetch whatever the message's author chose) and so is linkify;
- nh3 keeps only the tags, attributes and classes listed below, links only to
  ``http``, ``https`` and ``mailto``, and gives every link
  ``rel="noopener nofollow ugc"``.

Pure: no Django, no database. The HTML is computed once per message and kept
(``trees.rendering``); ``RENDERER_VERSION`` names this module's output, so a
change to what it produces bumps it and kept HTML of an older version is
rendered again.
"""

from __future__ import annotations

import functools
import re
from html import escape

import nh3
from markdown_it import MarkdownIt
from markdown_it.common.utils import escapeHtml
from markdown_it.rules_core import StateCore
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import get_all_lexers, get_lexer_by_name
from pygments.token import STANDARD_TYPES
from pygments.util import ClassNotFound

# Bump when the HTML this module makes for some text changes (a rule, the allow-list, a
# library upgrade that changes output): kept HTML of another version is rendered again.
RENDERER_VERSION = 1

# Code blocks longer than this are shown plain: highlighting is the slow part of rendering,
# and a lexer is the one piece that could be made to work hard by crafted input.
MAX_HIGHLIGHTED = 20_000

ALIGN_CLASSES = {"left": "align-left", "center": "align-center", "right": "align-right"}

# Pygments' short class names ("k", "nf", "s1", ...): every token class its formatter writes
# for the standard token types.
_TOKEN_CLASSES = frozenset(name for name in STANDARD_TYPES.values() if name)


@functools.cache
def _language_classes() -> frozenset[str]:
    """``language-<name>`` for every lexer Pygments has, by its first alias (computed once)."""
    return frozenset(f"language-{lexer[1][0]}" for lexer in get_all_lexers() if lexer[1])


_TAGS = {
    "p", "br", "hr", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote",
    "ul", "ol", "li", "pre", "code", "span", "em", "strong", "s", "a",
    "table", "thead", "tbody", "tr", "th", "td",
}  # fmt: skip
_ATTRIBUTES = {"a": {"href", "title"}, "ol": {"start"}}


@functools.cache
def _cleaner() -> nh3.Cleaner:
    return nh3.Cleaner(
        tags=_TAGS,
        attributes=_ATTRIBUTES,
        allowed_classes={
            "pre": {"highlight"},
            "code": set(_language_classes()),
            "span": set(_TOKEN_CLASSES),
            "th": set(ALIGN_CLASSES.values()),
            "td": set(ALIGN_CLASSES.values()),
        },
        url_schemes={"http", "https", "mailto"},
        link_rel="noopener nofollow ugc",
        strip_comments=True,
    )


@functools.cache
def _lexer(language: str):  # type: ignore[no-untyped-def]
    """Pygments' lexer for ``language`` (an info string's first word), or None when it has none."""
    try:
        return get_lexer_by_name(language, stripnl=False, ensurenl=False)
    except (ClassNotFound, ValueError):
        return None


_FORMATTER = HtmlFormatter(nowrap=True)


def _fenced(code: str, language: str, _attrs: str) -> str:
    """A fenced block's HTML: highlighted in ``<pre class="highlight">`` when Pygments knows its
    language, else escaped in a plain ``<pre><code>`` (no class naming a language nobody knows)."""
    name = language.strip().lower()
    lexer = _lexer(name) if name and len(code) <= MAX_HIGHLIGHTED else None
    if lexer is None:
        return f"<pre><code>{escapeHtml(code)}</code></pre>"
    spans = highlight(code, lexer, _FORMATTER)
    return f'<pre class="highlight"><code class="language-{lexer.aliases[0]}">{spans}</code></pre>'


_LINK_SCHEMES = re.compile(r"(?:https?|mailto):", re.IGNORECASE)


def _link_allowed(url: str) -> bool:
    """Links go to web and mail addresses only; any other target (``javascript:``, ``data:``, a
    path on this site) leaves the link as the text it was written as."""
    return _LINK_SCHEMES.match(url.strip()) is not None


def _alignment_as_classes(state: StateCore) -> None:
    """Table cells say their alignment with a class: a style attribute breaks a strict CSP."""
    for token in state.tokens:
        if token.type in ("th_open", "td_open") and token.attrs.get("style"):
            side = str(token.attrs.pop("style")).removeprefix("text-align:")
            if side in ALIGN_CLASSES:
                token.attrs["class"] = ALIGN_CLASSES[side]


def _parser() -> MarkdownIt:
    parser = MarkdownIt("commonmark", {"html": False, "linkify": False, "highlight": _fenced})
    parser.enable(["table", "strikethrough"])
    parser.disable("image")
    parser.core.ruler.push("alignment_as_classes", _alignment_as_classes)
    parser.validateLink = _link_allowed
    return parser


_PARSER = _parser()

# Prose: text that CommonMark reads as nothing but paragraphs. ASCII letters, digits, spaces
# and harmless punctuation, no line that opens a block (a list, a heading, a rule, indented
# code) and no space at either end of a line (a hard break, or trimmed). Its HTML is its
# paragraphs, exactly as markdown-it and nh3 would write them (tests/trees/test_markdown.py
# checks that the two agree), found about twenty times faster: most messages are plain prose,
# and an import renders every message. So cheap that it is not even kept (``stored_html``).
_PROSE_BYTES = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 \n,.;:'\"?!()/%$@=+-"
_LIST_ITEM = re.compile(r"\d+[.)]")


def is_prose(text: str) -> bool:
    """Whether ``text`` holds no Markdown at all: its HTML is ``prose_html(text)``."""
    # Deleting the allowed bytes is one C loop, several times faster than a regular expression.
    if not text.isascii() or text.encode("ascii").translate(None, _PROSE_BYTES):
        return False
    for line in text.split("\n"):
        if line and (line[0] in " =+-" or line[-1] == " " or _LIST_ITEM.match(line)):
            return False
    return True


def prose_html(text: str) -> str:
    """The HTML of prose (``is_prose``): its paragraphs. Escaped all the same, so that text that
    is not prose, passed here by mistake, shows wrong but stays text."""
    paragraphs = (part.strip("\n") for part in escape(text, quote=False).split("\n\n"))
    return "".join(f"<p>{part}</p>\n" for part in paragraphs if part.strip())


def _rendered(text: str) -> str:
    html = _cleaner().clean(_PARSER.render(text))
    # Code blocks and tables scroll sideways within themselves, so the keyboard must reach them
    # (WCAG 2.1.1). Added after sanitising: in nh3's output "<pre" and "<table" are only tags.
    return html.replace("<pre", '<pre tabindex="0"').replace("<table>", '<table tabindex="0">')


def message_html(text: str) -> str:
    """``text`` (a message, Markdown) as HTML that is safe to put into any page as it is."""
    if is_prose(text):
        return prose_html(text)
    return _rendered(text)


def stored_html(text: str) -> str | None:
    """What a message keeps of its HTML: None for prose, whose HTML is cheaper to make again
    (``prose_html``) than to store twice; else ``message_html(text)``."""
    return None if is_prose(text) else _rendered(text)


def kept_html(html: str | None, version: int, text: str) -> str:
    """A message's HTML from what it keeps (``stored_html``, written by renderer ``version``):
    rows an older renderer wrote are rendered now, until ``manage.py messages_render`` keeps
    them again."""
    if version != RENDERER_VERSION:
        return message_html(text)
    return prose_html(text) if html is None else html
