/* The keys of the annotate page, and its help dialog (?).
 *
 * The conversation moves like a WAI-ARIA tree, in all its layouts (a list
 * of turns, a tree, the focus view): arrows, Home, End, j and k move between
 * the rows shown, → unfolds a branch point or opens the turns collapsed
 * after a row, ← folds or goes to the parent. Enter opens the focused
 * message, Esc closes it, f switches the focus view on and off, p /
 * Backspace / c drive the first path scheme, b opens the next branch point
 * left to compare, 1-9 answer in the active widget and 0 clears it, Ctrl+Z
 * (Cmd+Z) undoes the last clear or delete (undo.js), e edits a submitted
 * item (editing.js) and Ctrl+Enter submits. [ and ] press Previous and Next
 * (My work's order). Keys typed into a text field stay there; arrows, Home,
 * End and Enter act only on the tree (or the page), not inside a widget.
 * While submitted work is read-only, the keys that would change it only say
 * how to edit it. The dialog's table in templates/annotation/annotate.html
 * lists them.
 */

// options: part, tree (tree_view.js), panel (panel.js), path (path.js),
// focusView (focus_view.js), widgets (widgets.js), item ({editable}), flash
// (flash.js), autosave (autosave.js), pending (pending.js), undo (undo.js)
// and editing (editing.js).
export function listenForKeys(options) {
  var part = options.part;
  var tree = options.tree;
  var panel = options.panel;
  var path = options.path;
  var widgets = options.widgets;
  var item = options.item;
  var flash = options.flash;
  var rows = tree.rows;
  var help = part("help");

  function openHelp() {
    if (!help.open) {
      help.showModal();
    }
  }

  help.addEventListener("close", tree.focusCurrent);

  // Previous and Next are plain links and forms (the template's): the key presses them,
  // or says why there is nowhere to go.
  function walk(control) {
    if (control.disabled) {
      flash(control.dataset.walkEnd);
    } else {
      control.click();
    }
  }

  function isTextEntry(target) {
    if (!target || !target.tagName) {
      return false;
    }
    if (target.isContentEditable || target.tagName === "TEXTAREA" || target.tagName === "SELECT") {
      return true;
    }
    return target.tagName === "INPUT" && ["radio", "checkbox", "button", "submit"].indexOf(target.type) < 0;
  }

  function activeWidget() {
    // The widget holding the focus, else the open message's own widget, else
    // its first comparison not answered yet.
    var holder = document.activeElement && document.activeElement.closest ? document.activeElement.closest("[data-widget]") : null;
    var held = holder ? widgets.tracked(holder) : null;
    if (held) {
      return held;
    }
    var panelWidgets = panel.widgets();
    if (panel.openId() === null || !panelWidgets.length) {
      return null;
    }
    var first = panelWidgets[0];
    if (!first.answered) {
      return first;
    }
    return panelWidgets.find(function (widget) {
      return widget.answered && !widget.answered();
    }) || first;
  }

  document.addEventListener("keydown", function (event) {
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
      event.preventDefault();
      options.autosave.submit();
      return;
    }
    if ((event.key === "z" || event.key === "Z") && (event.ctrlKey || event.metaKey) && !event.shiftKey && !event.altKey && !isTextEntry(event.target) && !help.open) {
      // Text fields keep their own undo.
      if (options.undo.undo()) {
        event.preventDefault();
      }
      return;
    }
    if (help.open || event.altKey || event.ctrlKey || event.metaKey || isTextEntry(event.target)) {
      return;
    }
    var target = event.target;
    var onRow = Boolean(target.classList && target.classList.contains("node") && target.dataset.id !== undefined);
    var onPage = onRow || target === document.body || target === document.documentElement;
    var current = tree.currentIndex();
    var pathScheme = path.keyed;
    if (options.editing.locked() && /^([0-9pc]|Backspace)$/.test(event.key) && (event.key !== "Backspace" || onPage)) {
      // A key that would change submitted work changes nothing and says how to edit it.
      flash("You submitted this item, so it is read-only: press e (Edit) to change it.");
      event.preventDefault();
      return;
    }
    switch (event.key) {
      case "?":
        openHelp();
        break;
      case "j":
        tree.focusRow(tree.visibleFrom(current, 1));
        break;
      case "k":
        tree.focusRow(tree.visibleFrom(current, -1));
        break;
      case "ArrowDown":
      case "ArrowUp":
        if (!onPage) {
          return;
        }
        tree.focusRow(tree.visibleFrom(current, event.key === "ArrowDown" ? 1 : -1));
        break;
      case "ArrowRight":
        if (!onPage) {
          return;
        }
        tree.expandOrEnter(current);
        break;
      case "ArrowLeft":
        if (!onPage) {
          return;
        }
        tree.collapseOrLeave(current);
        break;
      case "Home":
      case "End":
        if (!onPage) {
          return;
        }
        tree.focusRow(event.key === "Home" ? tree.visibleFrom(-1, 1) : tree.visibleFrom(rows.length, -1));
        break;
      case "Enter":
        if (!onPage || !rows.length) {
          return;
        }
        panel.open(tree.currentId());
        break;
      case "Escape":
        if (panel.openId() === null) {
          return;
        }
        panel.close();
        break;
      case "[":
      case "]":
        walk(part(event.key === "[" ? "walk-previous" : "walk-next"));
        break;
      case "f":
        if (!rows.length) {
          return;
        }
        if (!tree.isTree) {
          flash("This conversation never branches: it is one path already.");
        } else {
          options.focusView.toggle(tree.currentId());
        }
        break;
      case "p":
        if (!pathScheme || !rows.length) {
          return;
        }
        path.add(pathScheme, tree.currentId());
        break;
      case "Backspace":
        if (!pathScheme || !onPage) {
          return;
        }
        path.removeLast(pathScheme);
        break;
      case "c":
        if (!pathScheme) {
          return;
        }
        path.clear(pathScheme);
        break;
      case "b":
        if (!options.pending.openNext()) {
          return;
        }
        break;
      case "e":
        if (!options.editing.edit()) {
          return;
        }
        tree.focusCurrent();
        break;
      default:
        if (!/^[0-9]$/.test(event.key)) {
          return;
        }
        var widget = activeWidget();
        if (!widget) {
          flash("Open a message first (Enter), or move to a question with Tab.");
        } else if (!item.editable) {
          flash("This item can no longer be changed.");
        } else if (event.key === "0" ? !(widget.clear && widget.clear()) : !widget.key(parseInt(event.key, 10))) {
          return;
        }
    }
    event.preventDefault();
  });

  part("help-open").addEventListener("click", openHelp);
}
