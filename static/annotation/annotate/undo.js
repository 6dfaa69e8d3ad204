/* Undo on the annotate page: the destructive commands (clear the path,
 * clear a rating, delete a span) can be taken back.
 *
 * The page keeps a stack of restore closures, each with a label saying what
 * was lost. A destructive command pushes one and the toast says so, with an
 * Undo button: "Path cleared — Undo (Ctrl+Z)". Ctrl+Z (Cmd+Z on a Mac)
 * outside text fields, or the button, runs the last closure and the toast
 * says "Undone: path cleared". A restore puts the answers back and calls the
 * page's `changed`, so the restored state is saved like any other change.
 *
 * The interface, for the page's modules and for widget files (spans.js):
 *
 *   undo.push(label, restore)   after a destructive change; `label` says
 *                               what it did ("Span deleted"), `restore()`
 *                               puts it back (and saves it).
 *
 * Widget files, being classic scripts, get it as `toolkit.undo`
 * (widget_toolkit.js) and call `toolkit.undo.push(label, restore)` where
 * they delete something; a file built before undo existed simply lacks it.
 */

import { el } from "./elements.js";

var LIMIT = 50;
var TOAST_MS = 10000;

// options: toast (the polite live region the messages go in), item
// ({editable}: nothing is undone once the answers can no longer change) and
// refocus() (where the focus goes when the Undo button it was on goes away).
export function createUndo(options) {
  var toast = options.toast;
  var item = options.item;
  var stack = [];
  var timer = null;

  function show(parts) {
    clearTimeout(timer);
    toast.textContent = "";
    parts.forEach(function (part) {
      toast.appendChild(typeof part === "string" ? document.createTextNode(part) : part);
    });
    timer = setTimeout(function () {
      toast.textContent = "";
    }, TOAST_MS);
  }

  function push(label, restore) {
    stack.push({ label: label, restore: restore });
    if (stack.length > LIMIT) {
      stack.shift();
    }
    var button = el("button", { type: "button", class: "button", "aria-keyshortcuts": "Control+Z" }, ["Undo ", el("kbd", { text: "Ctrl" }), "+", el("kbd", { text: "Z" })]);
    button.addEventListener("click", function () {
      undo();
      options.refocus();
    });
    show([label + " — ", button]);
  }

  // Undoes the last destructive change; false when there is none (or the page is read-only).
  function undo() {
    if (!stack.length || !item.editable) {
      return false;
    }
    var last = stack.pop();
    last.restore();
    show(["Undone: " + last.label.charAt(0).toLowerCase() + last.label.slice(1)]);
    return true;
  }

  return { push: push, undo: undo };
}
