/* The focus view of the annotate page: one path of a branching
 * conversation, from its first message through the message you were on
 * down to a last reply, read as a list of turns. At each branch point on
 * the path its replies are tabs (the WAI-ARIA tabs pattern: ← and → move
 * between them and show that reply's thread below, Home and End go to the
 * first and last); a tab you pick is kept while the page is open.
 *
 * The rows are the tree's own, moved here and back, so their marks, spans,
 * the open message and the current row stay as they were; the answers are
 * never touched. The segments between branch points are flat siblings, not
 * nested, however many branch points the path crosses.
 */

import { el, nextId } from "./elements.js";

// options: tree (tree_view.js), box (the view's element), toggle (its
// button), measure(from, to) (long_messages.js) and next(id): the reply to
// follow below message `id` when no tab was picked there (the chosen path's
// next step, or null for the first reply).
export function createFocusView(options) {
  var tree = options.tree;
  var box = options.box;
  var toggle = options.toggle;
  var chosen = new Map();
  var moved = [];
  var active = false;

  function replies(id) {
    return tree.childrenById.get(id);
  }

  function followingReply(id) {
    var children = replies(id);
    var picked = chosen.get(id);
    if (picked !== undefined && children.indexOf(picked) >= 0) {
      return picked;
    }
    var next = options.next(id);
    return next !== null && children.indexOf(next) >= 0 ? next : children[0];
  }

  // The message ids from the first message through `id` to a last reply.
  function pathThrough(id) {
    var ids = [];
    for (var at = id; at !== null && tree.has(at); at = tree.parentOf(at)) {
      ids.push(at);
    }
    ids.reverse();
    for (var step = 1; step < ids.length; step += 1) {
      chosen.set(ids[step - 1], ids[step]);
    }
    var last = ids[ids.length - 1];
    while (replies(last).length) {
      last = followingReply(last);
      ids.push(last);
    }
    return ids;
  }

  // Puts the rows back into the tree, in preorder: the deepest first, each
  // before the row that follows it (already back, or never moved).
  function restore() {
    for (var step = moved.length - 1; step >= 0; step -= 1) {
      var index = moved[step];
      tree.element.insertBefore(tree.rows[index], tree.rows[index + 1] || null);
    }
    moved = [];
  }

  function build(ids) {
    restore();
    box.textContent = "";
    var tabsByBranch = new Map();
    var list = el("ol", { class: "focus-segment", role: "list" });
    box.appendChild(list);
    ids.forEach(function (id, step) {
      var index = tree.indexOf(id);
      list.appendChild(tree.rows[index]);
      moved.push(index);
      var children = replies(id);
      if (children.length < 2 || step + 1 >= ids.length) {
        return;
      }
      var panel = el("div", { class: "focus-panel", role: "tabpanel", id: nextId("focus-panel") });
      var tabs = el("div", { class: "focus-tabs", role: "tablist", "aria-label": "Replies to " + id });
      children.forEach(function (child, place) {
        var selected = child === ids[step + 1];
        var tab = el("button", {
          type: "button",
          class: "focus-tab",
          role: "tab",
          id: nextId("focus-tab"),
          "aria-selected": selected ? "true" : "false",
          "aria-controls": panel.id,
          tabindex: selected ? 0 : -1,
          "data-branch": id,
          "data-reply": child,
        }, ["Reply " + (place + 1) + " ", el("code", { text: child })]);
        if (selected) {
          panel.setAttribute("aria-labelledby", tab.id);
          tabsByBranch.set(id, tab);
        }
        tabs.appendChild(tab);
      });
      box.appendChild(el("div", { class: "focus-branch" }, [tabs, panel]));
      list = el("ol", { class: "focus-segment", role: "list" });
      panel.appendChild(list);
    });
    tree.setPathView(moved);
    return tabsByBranch;
  }

  function open(id) {
    active = true;
    build(pathThrough(id));
    tree.element.hidden = true;
    box.hidden = false;
    toggle.setAttribute("aria-pressed", "true");
    options.measure();
    tree.focusRow(tree.indexOf(id));
  }

  function close() {
    var id = tree.currentId();
    active = false;
    restore();
    box.textContent = "";
    tree.setPathView(null);
    box.hidden = true;
    tree.element.hidden = false;
    toggle.setAttribute("aria-pressed", "false");
    options.measure();
    tree.focusRow(tree.indexOf(id));
  }

  // Picks reply `child` at branch point `branch`: the path below follows it.
  function choose(branch, child) {
    chosen.set(branch, child);
    var ids = pathThrough(child);
    var tab = build(ids).get(branch);
    options.measure();
    if (ids.indexOf(tree.currentId()) < 0) {
      tree.setCurrent(tree.indexOf(child), false);
    }
    // The reply just picked comes into view under its tab, which keeps the focus.
    tree.rows[tree.indexOf(child)].scrollIntoView({ block: "nearest" });
    tab.focus();
  }

  box.addEventListener("click", function (event) {
    var tab = event.target.closest('[role="tab"]');
    if (tab && tab.getAttribute("aria-selected") !== "true") {
      choose(tab.dataset.branch, tab.dataset.reply);
    }
  });

  box.addEventListener("keydown", function (event) {
    var tab = event.target.closest ? event.target.closest('[role="tab"]') : null;
    if (!tab || event.altKey || event.ctrlKey || event.metaKey) {
      return;
    }
    var all = Array.prototype.slice.call(tab.parentNode.querySelectorAll('[role="tab"]'));
    var at = all.indexOf(tab);
    var to = { ArrowRight: at + 1, ArrowLeft: at - 1, Home: 0, End: all.length - 1 }[event.key];
    if (to === undefined) {
      return;
    }
    event.preventDefault();
    var target = all[(to + all.length) % all.length];
    choose(target.dataset.branch, target.dataset.reply);
  });

  toggle.hidden = !tree.isTree;
  toggle.addEventListener("click", function () {
    if (active) {
      close();
    } else if (tree.rows.length) {
      open(tree.currentId());
    }
  });

  return {
    active: function () {
      return active;
    },
    // Opens the view on message `id`, or closes it.
    toggle: function (id) {
      if (active) {
        close();
      } else {
        open(id);
      }
    },
  };
}
