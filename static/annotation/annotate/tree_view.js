/* The conversation of the annotate page: drawing the rows, focus, the
 * open row's selection, folding branch points and the collapsed stretches.
 *
 * The server sends the messages in preorder, each with its parent and
 * depth; tree_shape.js works out the levels. A conversation that never
 * branches is a list of turns (role="list"); one that branches is a flat
 * WAI-ARIA tree (role="tree") whose aria-level goes up only at branch points,
 * so a chain of single replies stays one level (nested markup would be
 * flattened by browsers past a few hundred levels anyway). Each row shows
 * its turn ("#37", the first message being #1) and a thread line joins a
 * reply to the message right above it when it is that message's only reply.
 *
 * Rows are addressed by index (their place in preorder) or by message id;
 * one row at a time holds the focus (a roving tabindex, which the buttons
 * inside the row follow). The focus view (focus_view.js) shows one path of
 * these same rows as a list: setPathView switches their semantics.
 */

import { el } from "./elements.js";
import { messageBody } from "./message_body.js";
import { treeShape } from "./tree_shape.js";

var TREE_ATTRIBUTES = ["role", "aria-level", "aria-setsize", "aria-posinset", "aria-expanded", "aria-selected"];

// Draws one row per message of `messages` into `treeElement` (an <ol>) and
// returns the view the other parts of the page read and move the tree through.
export function createTreeView(treeElement, messages) {
  var shape = treeShape(messages);
  var childrenById = shape.childrenById;
  var messageById = new Map();
  var indexById = new Map();
  messages.forEach(function (message, index) {
    messageById.set(message.id, message);
    indexById.set(message.id, index);
  });
  var isTree = shape.branching;
  var depths = messages.map(function (message) {
    return message.depth;
  });
  var branches = messages.map(function (message) {
    return childrenById.get(message.id).length >= 2;
  });
  // Why each row is hidden: a folded branch point above it, or a collapsed stretch.
  var folded = messages.map(function () {
    return false;
  });
  var foldHidden = folded.slice();
  var gapOf = messages.map(function () {
    return -1;
  });
  var gapOpen = shape.gaps.map(function () {
    return false;
  });
  shape.gaps.forEach(function (gap, number) {
    for (var index = gap.from; index <= gap.to; index += 1) {
      gapOf[index] = number;
    }
  });
  var gapButtons = [];
  // The rows the focus view shows (null when it is off).
  var pathView = null;
  var openIndex = -1;
  var current = 0;

  treeElement.setAttribute("role", isTree ? "tree" : "list");
  treeElement.classList.toggle("is-branching", isTree);
  var rows = drawRows();
  if (rows.length) {
    rovingStop(rows[0], 0);
  }
  var rootId = rows.length ? rows[0].dataset.id : null;

  // A row focused any other way (a screen reader's cursor, a script) becomes the current one.
  treeElement.parentNode.addEventListener("focusin", function (event) {
    var row = event.target;
    if (row.classList && row.classList.contains("node") && indexById.has(row.dataset.id)) {
      var index = indexById.get(row.dataset.id);
      if (index !== current) {
        setCurrent(index, false);
      }
    }
  });

  // The row's text element: the one place it is made (its rendered Markdown, or plain text in span mode).
  function messageText(message) {
    return messageBody(message, { className: "node-text", spanMode: treeElement.hasAttribute("data-span-mode"), compact: true });
  }

  // The visible turn number with its name for screen readers ("turn 37").
  function turnLabel(message) {
    var turn = message.depth + 1;
    return el("span", { class: "node-depth" }, [
      el("span", { "aria-hidden": "true", text: "#" + turn }),
      el("span", { class: "visually-hidden", text: "turn " + turn }),
    ]);
  }

  // A reply that starts a thread at a branch point says which reply it is.
  function replyLabel(message) {
    var siblings = message.parent !== null && childrenById.has(message.parent) ? childrenById.get(message.parent) : null;
    if (!siblings || siblings.length < 2) {
      return null;
    }
    return el("span", { class: "node-reply", text: "reply " + (shape.siblingIndex.get(message.id) + 1) + " of " + siblings.length });
  }

  // One row per message, in the preorder the server sent. Text goes in with textContent.
  function drawRows() {
    var fragment = document.createDocumentFragment();
    var drawn = messages.map(function (message, index) {
      var children = childrenById.get(message.id).length;
      var row = el("li", {
        id: "node-" + index,
        class: "node role-" + message.role + (branches[index] ? " is-branch" : "") + (shape.continues[index] ? " continues" : ""),
        tabindex: index === 0 ? 0 : -1,
        "data-id": message.id,
        "data-parent": message.parent,
        "data-children": children,
      }, [
        el("div", { class: "node-head" }, [
          el("span", { class: "node-toggle", "aria-hidden": "true", "data-leaf": !branches[index] }),
          turnLabel(message),
          el("span", { class: "node-role", text: message.role }),
          el("code", { class: "node-id", text: message.id }),
          branches[index] ? el("span", { class: "node-branch", text: "branch point: " + children + " replies" }) : null,
          replyLabel(message),
          el("span", { class: "node-marks", "data-marks": true }),
        ]),
        messageText(message),
      ]);
      if (isTree && shape.levels[index] > 1) {
        row.style.setProperty("--indent", String(shape.levels[index] - 1));
      }
      fragment.appendChild(row);
      return row;
    });
    shape.gaps.forEach(function (gap, number) {
      var hidden = gap.to - gap.from + 1;
      var button = el("button", {
        type: "button",
        class: "node-gap",
        tabindex: -1,
        "aria-expanded": "false",
        "data-gap": number,
        text: hidden + " more turns (#" + (depths[gap.from] + 1) + " to #" + (depths[gap.to] + 1) + ")",
      });
      gapButtons.push(button);
      drawn[gap.after].appendChild(button);
      drawn[gap.after].classList.add("has-gap");
    });
    if (!drawn.length) {
      treeElement.setAttribute("role", "list");
      fragment.appendChild(el("li", { class: "tree-empty", text: "This tree has no messages." }));
    }
    treeElement.appendChild(fragment);
    drawn.forEach(function (row, index) {
      applySemantics(index, row);
      row.hidden = gapOf[index] >= 0;
    });
    return drawn;
  }

  // The row's roles and states: a treeitem in a branching tree, a plain
  // list item in a linear dialogue and in the focus view.
  function applySemantics(index, row) {
    row = row || rows[index];
    if (isTree && !(pathView !== null && pathView.has(index))) {
      row.setAttribute("role", "treeitem");
      row.setAttribute("aria-level", shape.levels[index]);
      row.setAttribute("aria-setsize", shape.groups.setSizes[index]);
      row.setAttribute("aria-posinset", shape.groups.positions[index]);
      if (branches[index]) {
        row.setAttribute("aria-expanded", folded[index] ? "false" : "true");
      }
      row.setAttribute("aria-selected", index === openIndex ? "true" : "false");
      row.removeAttribute("aria-current");
    } else {
      TREE_ATTRIBUTES.forEach(function (name) {
        row.removeAttribute(name);
      });
      if (index === openIndex) {
        row.setAttribute("aria-current", "true");
      } else {
        row.removeAttribute("aria-current");
      }
    }
  }

  function applyVisibility(index) {
    rows[index].hidden = foldHidden[index] || (gapOf[index] >= 0 && !gapOpen[gapOf[index]]);
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

  // Whether the row can be folded (a branch point of a tree, outside the focus view).
  function isFoldable(index) {
    return isTree && pathView === null && branches[index];
  }

  function isFolded(index) {
    return isFoldable(index) && folded[index];
  }

  // The end (exclusive) of the row's replies and theirs, by message depth.
  function subtreeEnd(index) {
    var end = index + 1;
    while (end < rows.length && depths[end] > depths[index]) {
      end += 1;
    }
    return end;
  }

  function setExpanded(index, expanded) {
    if (!isFoldable(index)) {
      return;
    }
    folded[index] = !expanded;
    rows[index].setAttribute("aria-expanded", expanded ? "true" : "false");
    var end = subtreeEnd(index);
    var next = index + 1;
    while (next < end) {
      foldHidden[next] = !expanded;
      applyVisibility(next);
      // A branch point folded earlier keeps its replies hidden when an ancestor unfolds.
      next = expanded && folded[next] ? subtreeEnd(next) : next + 1;
    }
    shown(index + 1, end);
  }

  // Whether the row's stretch continues behind a collapsed "N more turns".
  function gapAfter(index) {
    for (var number = 0; number < shape.gaps.length; number += 1) {
      if (shape.gaps[number].after === index && !gapOpen[number]) {
        return number;
      }
    }
    return -1;
  }

  function openGap(number) {
    var gap = shape.gaps[number];
    if (gapOpen[number]) {
      return;
    }
    gapOpen[number] = true;
    for (var index = gap.from; index <= gap.to; index += 1) {
      applyVisibility(index);
    }
    var button = gapButtons[number];
    var row = rows[gap.after];
    if (button.contains(document.activeElement)) {
      focusRow(gap.from);
    }
    button.remove();
    row.classList.remove("has-gap");
    shown(gap.from, gap.to + 1);
  }

  // Makes the row visible: opens the stretch it is collapsed in and unfolds
  // the branch points above it.
  function reveal(index) {
    if (pathView !== null || !rows[index].hidden) {
      return;
    }
    if (gapOf[index] >= 0) {
      openGap(gapOf[index]);
    }
    var above = [];
    for (var id = parentOf(rows[index].dataset.id); id !== null && indexById.has(id); id = parentOf(id)) {
      if (folded[indexById.get(id)]) {
        above.push(indexById.get(id));
      }
    }
    above.reverse().forEach(function (ancestor) {
      setExpanded(ancestor, true);
    });
  }

  // Listeners told when rows come into view (to measure their text).
  var onShown = [];
  function shown(from, to) {
    onShown.forEach(function (listener) {
      listener(from, to);
    });
  }

  function isShown(index) {
    return pathView !== null ? pathView.has(index) : !rows[index].hidden;
  }

  function setCurrent(index, focus) {
    if (index < 0 || index >= rows.length) {
      return;
    }
    rovingStop(rows[current], -1);
    current = index;
    rovingStop(rows[index], 0);
    if (focus) {
      rows[index].focus();
    }
  }

  // The row and the buttons in it are one stop of the Tab key while it is current.
  function rovingStop(row, tabIndex) {
    row.tabIndex = tabIndex;
    row.querySelectorAll("button").forEach(function (button) {
      button.tabIndex = tabIndex;
    });
  }

  function focusRow(index) {
    if (index < 0 || index >= rows.length) {
      return;
    }
    reveal(index);
    setCurrent(index, true);
  }

  function visibleFrom(index, step) {
    var next = index + step;
    while (next >= 0 && next < rows.length && !isShown(next)) {
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

  // The row of the message open in the panel is selected (in a tree), or current (in a list).
  function setOpen(id, open) {
    var index = indexById.get(id);
    if (open) {
      openIndex = index;
    } else if (openIndex === index) {
      openIndex = -1;
    }
    rows[index].classList.toggle("is-open", open);
    applySemantics(index);
  }

  // → on a row: unfold it, open the stretch collapsed after it, or go to its first reply.
  function expandOrEnter(index) {
    if (isFolded(index)) {
      setExpanded(index, true);
    } else if (pathView === null && gapAfter(index) >= 0) {
      openGap(gapAfter(index));
    } else if (childrenById.get(rows[index].dataset.id).length) {
      focusRow(visibleFrom(index, 1));
    }
  }

  // ← on a row: fold it, else go to the message it replies to.
  function collapseOrLeave(index) {
    if (isFoldable(index) && !folded[index]) {
      setExpanded(index, false);
      return;
    }
    var parent = parentOf(rows[index].dataset.id);
    if (parent !== null && indexById.has(parent)) {
      focusRow(indexById.get(parent));
    }
  }

  // The focus view shows `indexes` (a path, in preorder) as a list; null
  // goes back to the whole conversation, as it was.
  function setPathView(indexes) {
    var before = pathView;
    pathView = indexes === null ? null : new Set(indexes);
    if (before !== null) {
      before.forEach(function (index) {
        applyVisibility(index);
        applySemantics(index);
      });
    }
    if (pathView !== null) {
      pathView.forEach(function (index) {
        rows[index].hidden = false;
        applySemantics(index);
      });
    }
  }

  // A click on a branch point's fold toggle folds or unfolds it; on "N more
  // turns", shows them; anywhere else on a row (but its buttons), focuses
  // the row and opens its message with `open(id)`.
  function openOnClick(open) {
    treeElement.parentNode.addEventListener("click", function (event) {
      var row = event.target.closest(".node[data-id]");
      if (!row) {
        return;
      }
      var index = indexById.get(row.dataset.id);
      var gap = event.target.closest(".node-gap");
      if (gap) {
        openGap(Number(gap.dataset.gap));
        return;
      }
      if (event.target.closest("button, a")) {
        return;
      }
      if (event.target.closest(".node-toggle") && isFoldable(index)) {
        setExpanded(index, folded[index]);
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
    element: treeElement,
    rows: rows,
    rootId: rootId,
    childrenById: childrenById,
    isTree: isTree,
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
    isShown: isShown,
    setExpanded: setExpanded,
    expandOrEnter: expandOrEnter,
    collapseOrLeave: collapseOrLeave,
    visibleFrom: visibleFrom,
    focusRow: focusRow,
    setCurrent: setCurrent,
    focusCurrent: focusCurrent,
    setOpen: setOpen,
    setPathView: setPathView,
    onShown: function (listener) {
      onShown.push(listener);
    },
    openOnClick: openOnClick,
  };
}
