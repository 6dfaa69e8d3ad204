/* The conversation tree of the annotate page: drawing the rows, focus,
 * the open row's selection, folding and unfolding.
 *
 * The server sends the messages in preorder, each with its parent and
 * depth; the rows are a flat WAI-ARIA tree whose aria-level gives the
 * nesting (nested markup would be flattened by browsers past a few hundred
 * levels). Rows are addressed by index (their place in preorder) or by
 * message id; one row at a time holds the focus (a roving tabindex).
 */

import { el } from "./elements.js";
import { messageBody } from "./message_body.js";

// Rows deeper than this are drawn at this indentation (trees.selectors.MAX_INDENT).
var MAX_INDENT = 40;

// Draws one row per message of `messages` into `treeElement` and returns
// the view the other parts of the page read and move the tree through.
export function createTreeView(treeElement, messages) {
  var messageById = new Map();
  var childrenById = new Map();
  messages.forEach(function (message) {
    messageById.set(message.id, message);
    childrenById.set(message.id, []);
  });
  var rootIds = [];
  var siblingIndex = new Map();
  messages.forEach(function (message) {
    var siblings = message.parent !== null && childrenById.has(message.parent) ? childrenById.get(message.parent) : rootIds;
    siblingIndex.set(message.id, siblings.length);
    siblings.push(message.id);
  });
  var rows = drawRows();
  var levels = messages.map(function (message) {
    return message.depth + 1;
  });
  var indexById = new Map();
  rows.forEach(function (row, index) {
    indexById.set(row.dataset.id, index);
  });
  var rootId = rows.length ? rows[0].dataset.id : null;

  // One row per message, in the preorder the server sent: a flat WAI-ARIA
  // tree whose aria-level gives the nesting. Text goes in with textContent.
  function drawRows() {
    var fragment = document.createDocumentFragment();
    var drawn = messages.map(function (message, index) {
      var children = childrenById.get(message.id).length;
      var siblings = message.parent === null ? rootIds : childrenById.get(message.parent);
      var row = el("li", {
        id: "node-" + index,
        class: "node role-" + message.role + " indent-" + Math.min(message.depth, MAX_INDENT) + (children >= 2 ? " is-branch" : ""),
        role: "treeitem",
        "aria-level": message.depth + 1,
        "aria-setsize": siblings.length,
        "aria-posinset": siblingIndex.get(message.id) + 1,
        "aria-expanded": children ? "true" : null,
        "aria-selected": "false",
        tabindex: index === 0 ? 0 : -1,
        "data-id": message.id,
        "data-parent": message.parent,
        "data-children": children,
      }, [
        el("div", { class: "node-head" }, [
          el("span", { class: "node-toggle", "aria-hidden": "true", "data-leaf": !children }),
          el("span", { class: "node-role", text: message.role }),
          el("code", { class: "node-id", text: message.id }),
          children >= 2 ? el("span", { class: "node-branch", text: "branch point: " + children + " replies" }) : null,
          el("span", { class: "node-marks", "data-marks": true }),
        ]),
        messageBody(message, { className: "node-text", spanMode: treeElement.hasAttribute("data-span-mode"), compact: true }),
      ]);
      fragment.appendChild(row);
      return row;
    });
    if (!drawn.length) {
      fragment.appendChild(el("li", { class: "tree-empty", text: "This tree has no messages." }));
    }
    treeElement.appendChild(fragment);
    return drawn;
  }

  function rowOf(id) {
    return rows[indexById.get(id)];
  }

  function parentOf(id) {
    return messageById.get(id).parent;
  }

  function textOf(id) {
    return messageById.get(id).text;
  }

  function roleOf(id) {
    return messageById.get(id).role;
  }

  function isFolded(index) {
    return rows[index].getAttribute("aria-expanded") === "false";
  }

  function subtreeEnd(index) {
    var end = index + 1;
    while (end < rows.length && levels[end] > levels[index]) {
      end += 1;
    }
    return end;
  }

  function setExpanded(index, expanded) {
    if (!rows[index].hasAttribute("aria-expanded")) {
      return;
    }
    rows[index].setAttribute("aria-expanded", expanded ? "true" : "false");
    var end = subtreeEnd(index);
    var next = index + 1;
    while (next < end) {
      rows[next].hidden = !expanded;
      // A node folded earlier keeps its subtree hidden when an ancestor unfolds.
      next = expanded && isFolded(next) ? subtreeEnd(next) : next + 1;
    }
  }

  var current = 0;

  function focusRow(index) {
    if (index < 0 || index >= rows.length) {
      return;
    }
    rows[current].tabIndex = -1;
    current = index;
    rows[index].tabIndex = 0;
    rows[index].focus();
  }

  function visibleFrom(index, step) {
    var next = index + step;
    while (next >= 0 && next < rows.length && rows[next].hidden) {
      next += step;
    }
    return next >= 0 && next < rows.length ? next : index;
  }

  function currentId() {
    return rows.length ? rows[current].dataset.id : null;
  }


  function focusCurrent() {
    focusRow(current);
  }

  // The row of the message open in the panel is selected.
  function setOpen(id, open) {
    var row = rowOf(id);
    row.classList.toggle("is-open", open);
    row.setAttribute("aria-selected", open ? "true" : "false");
  }

  // A click on a row's fold toggle folds or unfolds it; a click anywhere
  // else on a row focuses it and opens its message with `open(id)`.
  function openOnClick(open) {
    treeElement.addEventListener("click", function (event) {
      var row = event.target.closest('[role="treeitem"]');
      if (!row) {
        return;
      }
      var index = indexById.get(row.dataset.id);
      if (event.target.closest(".node-toggle")) {
        setExpanded(index, isFolded(index));
        focusRow(index);
        return;
      }
      // A click that ends selecting text (to make a span, say) is not a request to open the message.
      var selection = window.getSelection ? window.getSelection() : null;
      if (selection && !selection.isCollapsed && row.contains(selection.anchorNode)) {
        return;
      }
      focusRow(index);
      open(row.dataset.id);
    });
  }

  return {
    rows: rows,
    rootId: rootId,
    childrenById: childrenById,
    has: function (id) {
      return indexById.has(id);
    },
    indexOf: function (id) {
      return indexById.get(id);
    },
    currentIndex: function () {
      return current;
    },
    currentId: currentId,
    rowOf: rowOf,
    parentOf: parentOf,
    textOf: textOf,
    roleOf: roleOf,
    isFolded: isFolded,
    setExpanded: setExpanded,
    visibleFrom: visibleFrom,
    focusRow: focusRow,
    focusCurrent: focusCurrent,
    setOpen: setOpen,
    openOnClick: openOnClick,
  };
}
