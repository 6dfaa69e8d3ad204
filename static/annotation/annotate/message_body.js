/* A message's body on the annotate page: its text as rendered Markdown, and a
 * button that shows the exact text instead.
 *
 * The HTML comes from the server, rendered and sanitised there once per
 * message (trees/markdown.py: raw HTML in a message is text, links only to
 * web and mail addresses, no images); it is the one thing on the page put in
 * with innerHTML. The source is the text itself, in a <pre> through
 * textContent, built on the first press. Styles: static/trees/markdown.css.
 * Server-rendered pages draw the same markup from
 * templates/trees/message_body.html.
 *
 * In span mode (a span scheme on the page) the body is the plain text and
 * nothing else: spans are character offsets into the text, and
 * static/annotation/spans.js paints them into this element.
 */

import { el } from "./elements.js";

// options: spanMode (plain text only), className (added to the body's
// classes), name (what the toggle calls the message: its id unless given, as
// for compared replies, named by letter so as not to give the shuffle away) and compact (as inside the tree's rows, where the keys move
// between messages: links leave the Tab order, and code and tables wrap or
// clip rather than scroll, since a scrolling block would need a Tab stop;
// the open message's panel has the whole body. The toggle starts out of the
// Tab order; tree_view.js makes the current row's buttons a stop).
export function messageBody(message, options) {
  var settings = options || {};
  var className = settings.className ? " " + settings.className : "";
  if (settings.spanMode || typeof message.html !== "string") {
    return el("div", { class: "message-plain" + className, lang: message.lang, text: message.text });
  }
  var rendered = el("div", { class: "markdown", "data-message-rendered": true });
  // Sanitised on the server (trees.markdown); never the raw text.
  rendered.innerHTML = message.html;
  var toggle = el("button", {
    type: "button",
    class: "message-source-toggle",
    "aria-pressed": "false",
    // The name stays the same; aria-pressed says which view is showing.
    "aria-label": "Show source of " + (settings.name || "message " + message.id),
    "data-message-source-toggle": true,
    text: "Show source",
  });
  if (settings.compact) {
    toggle.tabIndex = -1;
    rendered.querySelectorAll("a, pre, table").forEach(function (stop) {
      stop.removeAttribute("tabindex");
      if (stop.tagName === "A") {
        stop.tabIndex = -1;
      }
    });
  }
  // The toggle comes after the text (the stylesheet puts it in the corner), so the text reads first.
  var body = el("div", { class: "message-body" + (settings.compact ? " message-body-compact" : "") + className, lang: message.lang, "data-message-body": true }, [rendered, toggle]);
  var source = null;
  toggle.addEventListener("click", function (event) {
    // A press is not a click on the tree row around it (which opens the message).
    event.stopPropagation();
    if (source === null) {
      source = el("pre", { class: "message-source", "data-message-source": true, text: message.text });
      body.insertBefore(source, toggle);
    }
    var showSource = toggle.getAttribute("aria-pressed") !== "true";
    toggle.setAttribute("aria-pressed", showSource ? "true" : "false");
    rendered.hidden = showSource;
    source.hidden = !showSource;
  });
  return body;
}
