/* Folding and keyboard use for the tree outline (templates/trees/_tree_outline.html).
 *
 * The rows are a flat list in preorder with aria-level, so a node's subtree
 * is the run of rows after it with a higher level: folding hides that run,
 * unfolding shows it again except under nodes that are still folded. Keys
 * follow the WAI-ARIA tree view pattern. No inline script, no globals.
 */
(function () {
  "use strict";

  function setUp(container) {
    var rows = Array.prototype.slice.call(container.querySelectorAll('[role="treeitem"]'));
    if (!rows.length) {
      return;
    }
    var levels = rows.map(function (row) {
      return parseInt(row.getAttribute("aria-level"), 10);
    });
    var indexOf = new Map();
    rows.forEach(function (row, index) {
      indexOf.set(row, index);
    });

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
      var row = rows[index];
      if (!row.hasAttribute("aria-expanded")) {
        return;
      }
      row.setAttribute("aria-expanded", expanded ? "true" : "false");
      var end = subtreeEnd(index);
      var next = index + 1;
      while (next < end) {
        rows[next].hidden = !expanded;
        // A node folded earlier keeps its subtree hidden when an ancestor unfolds.
        next = expanded && isFolded(next) ? subtreeEnd(next) : next + 1;
      }
    }

    function setAll(expanded) {
      rows.forEach(function (row, index) {
        if (row.hasAttribute("aria-expanded")) {
          row.setAttribute("aria-expanded", expanded ? "true" : "false");
        }
        row.hidden = !expanded && levels[index] > levels[0];
        row.tabIndex = index === 0 ? 0 : -1;
      });
    }

    function focusRow(index) {
      rows.forEach(function (row) {
        row.tabIndex = -1;
      });
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

    function parentOf(index) {
      for (var previous = index - 1; previous >= 0; previous -= 1) {
        if (levels[previous] < levels[index]) {
          return previous;
        }
      }
      return index;
    }

    container.addEventListener("click", function (event) {
      var toggle = event.target.closest(".outline-toggle");
      if (!toggle) {
        return;
      }
      var index = indexOf.get(toggle.closest('[role="treeitem"]'));
      if (index === undefined) {
        return;
      }
      setExpanded(index, isFolded(index));
      focusRow(index);
    });

    container.addEventListener("keydown", function (event) {
      var index = indexOf.get(event.target);
      if (index === undefined || event.altKey || event.ctrlKey || event.metaKey) {
        return;
      }
      var expandable = rows[index].hasAttribute("aria-expanded");
      switch (event.key) {
        case "ArrowDown":
          focusRow(visibleFrom(index, 1));
          break;
        case "ArrowUp":
          focusRow(visibleFrom(index, -1));
          break;
        case "ArrowRight":
          if (expandable && isFolded(index)) {
            setExpanded(index, true);
          } else if (expandable) {
            focusRow(index + 1);
          }
          break;
        case "ArrowLeft":
          if (expandable && !isFolded(index)) {
            setExpanded(index, false);
          } else {
            focusRow(parentOf(index));
          }
          break;
        case "Home":
          focusRow(0);
          break;
        case "End":
          focusRow(visibleFrom(rows.length, -1));
          break;
        case "Enter":
        case " ":
          if (!expandable) {
            return;
          }
          setExpanded(index, isFolded(index));
          break;
        default:
          return;
      }
      event.preventDefault();
    });

    var tools = container.querySelector(".tree-outline-tools");
    if (tools) {
      tools.hidden = false;
      tools.querySelector("[data-outline-expand-all]").addEventListener("click", function () {
        setAll(true);
      });
      tools.querySelector("[data-outline-collapse-all]").addEventListener("click", function () {
        setAll(false);
      });
    }
  }

  function setUpAll() {
    Array.prototype.forEach.call(document.querySelectorAll("[data-tree-outline]"), setUp);
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", setUpAll);
  } else {
    setUpAll();
  }
})();
