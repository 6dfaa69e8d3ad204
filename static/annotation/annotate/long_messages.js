/* Long messages in the rows of the conversation: a row shows the first
 * lines of its message (annotate.css caps the height of .node-text, whatever
 * is drawn in it, plain text or rendered markup), and a row whose text runs
 * past them gets a "Show more" button that lets the whole text out, and back
 * in. The panel always shows the whole message.
 *
 * Whether a text runs over is measured, not guessed from its length: that
 * depends on the width and on how the text is drawn. Rows are measured in
 * two passes, all reads and then all writes, so the browser lays the list out
 * once: when the page starts, when rows come into view (an unfolded branch,
 * an opened stretch, the focus view) and when the width changes.
 */

import { el } from "./elements.js";

// `tree` is tree_view.js's view; returns {measure(from, to)}.
export function createLongMessages(tree) {
  var rows = tree.rows;
  var width = null;

  function textBox(row) {
    return row.querySelector(".node-text");
  }

  // Measures the shown rows from..to (exclusive; all rows by default).
  function measure(from, to) {
    var start = from || 0;
    var end = to === undefined ? rows.length : to;
    var over = [];
    for (var index = start; index < end; index += 1) {
      var row = rows[index];
      var box = textBox(row);
      if (!box || !tree.isShown(index) || row.classList.contains("is-unclamped")) {
        over.push(null);
      } else {
        over.push(box.scrollHeight > box.clientHeight + 1);
      }
    }
    over.forEach(function (runsOver, offset) {
      if (runsOver !== null) {
        mark(rows[start + offset], runsOver);
      }
    });
  }

  function mark(row, runsOver) {
    row.classList.toggle("is-clamped", runsOver);
    var button = row.querySelector(".node-more");
    if (runsOver && !button) {
      var box = textBox(row);
      box.id = row.id + "-text";
      button = el("button", { type: "button", class: "node-more", "aria-expanded": "false", "aria-controls": box.id }, [
        el("span", { "data-more-label": true, text: "Show more" }),
        el("span", { class: "visually-hidden", text: " of " + row.dataset.id }),
      ]);
      // The buttons of a row are a stop of the Tab key only while the row is current.
      button.tabIndex = row.tabIndex;
      box.after(button);
    }
    if (button) {
      button.hidden = !runsOver;
    }
  }

  function toggle(row) {
    var whole = !row.classList.contains("is-unclamped");
    var button = row.querySelector(".node-more");
    row.classList.toggle("is-unclamped", whole);
    row.classList.toggle("is-clamped", !whole);
    button.setAttribute("aria-expanded", whole ? "true" : "false");
    button.querySelector("[data-more-label]").textContent = whole ? "Show less" : "Show more";
    if (!whole) {
      row.scrollIntoView({ block: "nearest" });
    }
  }

  var area = tree.element.parentNode;
  area.addEventListener("click", function (event) {
    var button = event.target.closest(".node-more");
    if (button) {
      toggle(button.closest(".node"));
    }
  });
  tree.onShown(measure);

  if (window.ResizeObserver) {
    var pending = false;
    new ResizeObserver(function (entries) {
      var now = Math.round(entries[entries.length - 1].contentRect.width);
      var first = width === null;
      if (now === width) {
        return;
      }
      width = now;
      // The first report is the width the page started at, measured already.
      if (!first && !pending) {
        pending = true;
        requestAnimationFrame(function () {
          pending = false;
          measure();
        });
      }
    }).observe(area);
  }

  return { measure: measure };
}
