/* Path selection on the annotate page: the path bars above the tree and
 * the path commands (add the focused message, remove the last, clear).
 *
 * A path starts at the first message and each step replies to the one
 * before; a command that would break that is refused and the flash line
 * says why. The path changes only through these commands, never by opening
 * a message. The first path scheme is the one the keys drive (p, Backspace,
 * c) and the one the tree rows mark. Clearing the path can be undone
 * (undo.js).
 */

import { el } from "./elements.js";

// options: part, tree (tree_view.js), answers (answers.js), item
// ({editable}), flash (flash.js), markRow (row_marks.js), changed
// (autosave.js) and undo (undo.js).
export function createPath(options) {
  var part = options.part;
  var tree = options.tree;
  var answers = options.answers;
  var item = options.item;
  var flash = options.flash;
  var markRow = options.markRow;
  var changed = options.changed;
  var pathSchemes = answers.pathSchemes;
  var pathLists = new Map();

  function pathAdd(scheme, id) {
    var path = answers.get(scheme.name).path;
    var last = path.length ? path[path.length - 1] : null;
    if (!item.editable) {
      flash("This item can no longer be changed.");
    } else if (path.indexOf(id) >= 0) {
      flash("“" + id + "” is already on the path.");
    } else if (last === null && id !== tree.rootId) {
      flash("A path starts at the first message, “" + tree.rootId + "”: add it first.");
    } else if (last !== null && tree.parentOf(id) !== last) {
      flash("“" + id + "” is not a reply to “" + last + "”, the path's last message; add one of its replies, or clear the path (c).");
    } else {
      path.push(id);
      pathChanged(scheme, [id]);
      flash("Added “" + id + "” to the path (step " + path.length + ").");
    }
  }

  function pathRemoveLast(scheme) {
    var path = answers.get(scheme.name).path;
    if (!item.editable || !path.length) {
      return;
    }
    var removed = path.pop();
    pathChanged(scheme, [removed]);
    flash("Took “" + removed + "” off the path.");
  }

  function pathClear(scheme) {
    var path = answers.get(scheme.name).path;
    if (!item.editable || !path.length) {
      return;
    }
    var removed = path.splice(0, path.length);
    pathChanged(scheme, removed);
    flash("Cleared the path.");
    options.undo.push(pathSchemes.length > 1 ? "Path (" + scheme.name + ") cleared" : "Path cleared", function () {
      // Whatever was chosen since gives way to the path as it was.
      var since = path.splice.apply(path, [0, path.length].concat(removed));
      pathChanged(scheme, since);
    });
  }

  function pathChanged(scheme, touched) {
    drawPath(scheme);
    if (scheme === pathSchemes[0]) {
      answers.get(scheme.name).path.concat(touched).forEach(markRow);
    }
    changed();
  }

  function drawPath(scheme) {
    var list = pathLists.get(scheme.name);
    var path = answers.get(scheme.name).path;
    list.textContent = "";
    if (!path.length) {
      list.appendChild(el("li", { class: "path-empty", text: "No path yet: focus the first message and press p." }));
    }
    path.forEach(function (id) {
      list.appendChild(el("li", { "data-step": id }, [el("code", { text: id }), " ", el("span", { class: "muted", text: tree.roleOf(id) })]));
    });
  }

  function buildPathBars() {
    var box = part("path-bars");
    // Drawn again when the page turns editable (editing.js).
    box.textContent = "";
    pathSchemes.forEach(function (scheme, index) {
      var list = el("ol", { class: "path-list", "data-path": scheme.name, "aria-live": "polite" });
      pathLists.set(scheme.name, list);
      var keys = index === 0;
      var add = el("button", { type: "button", class: "button", disabled: !item.editable }, ["Add focused message", keys ? el("kbd", { text: "p" }) : null]);
      var back = el("button", { type: "button", class: "button", disabled: !item.editable }, ["Remove last", keys ? el("kbd", { text: "Backspace" }) : null]);
      var clear = el("button", { type: "button", class: "button", disabled: !item.editable }, ["Clear path", keys ? el("kbd", { text: "c" }) : null]);
      add.addEventListener("click", function () {
        pathAdd(scheme, tree.currentId());
      });
      back.addEventListener("click", pathRemoveLast.bind(null, scheme));
      clear.addEventListener("click", pathClear.bind(null, scheme));
      // Headed by the scheme's description, as Potato heads a tree scheme; then what the
      // path is for (path_selection.description, "Select the best response path" by default).
      var title = scheme.description || (pathSchemes.length > 1 ? "Path (" + scheme.name + ")" : "Path");
      box.appendChild(el("section", { class: "path-bar", "aria-label": title }, [
        el("h3", { text: title }),
        scheme.path_selection.description ? el("p", { class: "muted", "data-path-description": "", text: scheme.path_selection.description }) : null,
        list,
        el("div", { class: "path-tools" }, [add, " ", back, " ", clear]),
      ]));
      drawPath(scheme);
    });
  }

  return {
    // The scheme the keys drive, if any.
    keyed: pathSchemes[0],
    add: pathAdd,
    removeLast: pathRemoveLast,
    clear: pathClear,
    buildBars: buildPathBars,
  };
}
