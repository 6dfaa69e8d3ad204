/* The branch points still to compare, listed under the summary above Submit:
 * "Compare: 2 branch points left", then a button per branch point ("after
 * #4 (3 replies)") that opens its comparison with the focus in it, so the
 * comparisons are found without opening every branch point first; b opens
 * the next one after the current message (keyboard.js).
 */

import { el } from "./elements.js";
import { pendingBranchPoints } from "./progress.js";

// options: box (the list's element, hidden when nothing is left), answers
// (answers.js), tree (tree_view.js), messages (the item's, for each one's
// turn), open(id) (opens the branch point's comparison: panel.js) and flash.
// Returns {update, openNext}.
export function createPending(options) {
  var box = options.box;
  var answers = options.answers;
  var tree = options.tree;
  var depthById = new Map();
  (options.messages || []).forEach(function (message) {
    depthById.set(message.id, message.depth);
  });
  var drawn = null;

  // The turn a branch point is, as its row shows it; its id too when another pending one is the same turn.
  function pointLabel(point, points) {
    var turn = depthById.get(point.id) + 1;
    var shared = points.some(function (other) {
      return other.id !== point.id && depthById.get(other.id) === depthById.get(point.id);
    });
    return ["after #" + turn, shared ? el("code", { text: point.id }) : null, "(" + point.replies + " replies)"];
  }

  function update() {
    if (!box) {
      return;
    }
    var points = pendingBranchPoints(answers, tree);
    var key = points.map(function (point) {
      return point.id;
    }).join("\n");
    // Redrawn only when the list changes, so a button keeps the focus across answers.
    if (key === drawn) {
      return;
    }
    drawn = key;
    box.hidden = !points.length;
    box.textContent = "";
    if (!points.length) {
      return;
    }
    box.appendChild(el("span", { class: "pending-title" }, [
      "Compare: " + points.length + " branch point" + (points.length === 1 ? "" : "s") + " left ",
      el("kbd", { title: "next branch point to compare", text: "b" }),
    ]));
    points.forEach(function (point) {
      var parts = pointLabel(point, points);
      var button = el("button", {
        type: "button",
        class: "button pending-point",
        "data-pending-point": point.id,
        "aria-label": "Compare the " + point.replies + " replies after message " + point.id + " (turn " + (depthById.get(point.id) + 1) + ")",
      }, [parts[0], parts[1] ? " " : null, parts[1], " " + parts[2]]);
      button.addEventListener("click", function () {
        options.open(point.id);
      });
      box.appendChild(button);
    });
  }

  // Opens the first pending branch point after the open (else the current)
  // message, round to the first; false when the project compares no replies.
  function openNext() {
    if (!answers.compareSchemes.length) {
      return false;
    }
    var points = pendingBranchPoints(answers, tree);
    if (!points.length) {
      options.flash("No branch point is left to compare.");
      return true;
    }
    var openId = options.openId();
    var from = openId !== null ? tree.indexOf(openId) : tree.currentIndex() - 1;
    var next = points.find(function (point) {
      return tree.indexOf(point.id) > from;
    }) || points[0];
    options.open(next.id);
    return true;
  }

  return { update: update, openNext: openNext };
}
