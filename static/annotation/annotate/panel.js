/* The message panel of the annotate page: the open message's whole text,
 * the message it replies to, its widgets and the comparisons of its replies.
 *
 * Opening a message only reads the answers: each widget's callback is bound
 * to the message's own id, so a widget can only ever write that message's
 * answer, and the path changes through the path commands alone.
 */

import { messageBody } from "./message_body.js";

// options: part (the page's parts by data- name), tree (tree_view.js),
// messages (the item's, as the server sent them), spanMode (plain text:
// message_body.js), answers (answers.js), widgets (widgets.js), markRow
// (row_marks.js), comparisons (comparisons.js), changed (autosave.js) and
// undo (undo.js: a cleared answer can be put back).
export function createPanel(options) {
  var part = options.part;
  var tree = options.tree;
  var answers = options.answers;
  var widgets = options.widgets;
  var markRow = options.markRow;
  var changed = options.changed;
  var treeSchemes = answers.treeSchemes;
  var panel = part("panel");
  var messageById = new Map();
  (options.messages || []).forEach(function (message) {
    messageById.set(message.id, message);
  });
  var openId = null;

  // The message's body (rendered, with its source a press away) in place of what `box` held.
  function showBody(box, id) {
    box.textContent = "";
    if (id !== null) {
      box.appendChild(messageBody(messageById.get(id), { spanMode: options.spanMode }));
    }
  }
  var panelWidgets = [];

  function openNode(id) {
    if (openId !== null && tree.has(openId)) {
      tree.setOpen(openId, false);
    }
    openId = id;
    tree.setOpen(id, true);
    panel.hidden = false;
    panel.dataset.node = id;
    part("panel-heading").textContent = "Message " + id;
    part("panel-role").textContent = tree.roleOf(id);
    part("panel-id").textContent = id;
    showBody(part("panel-text"), id);
    var parent = tree.parentOf(id);
    part("panel-context").hidden = parent === null;
    part("panel-parent-id").textContent = parent === null ? "" : parent;
    showBody(part("panel-parent-text"), parent);

    panelWidgets = [];
    var widgetsBox = part("panel-widgets");
    widgetsBox.textContent = "";
    treeSchemes.forEach(function (scheme) {
      if (!scheme.rates_nodes) {
        return;
      }
      var state = answers.get(scheme.name);
      var type = scheme.node_scheme.annotation_type;
      // Headed by what the config says the scheme is for (Potato's description), the node
      // scheme's own first; the type's title only for a config saved before descriptions were required.
      var described = scheme.node_scheme.description || scheme.description;
      var title = described || widgets.titleOf(type) || "Answer";
      var legend = !described && treeSchemes.length > 1 ? title + " (" + scheme.name + ")" : title;
      // The callback is bound to this node's id: a widget can only ever write its own node's answer.
      var widget = widgets.track(widgets.build(type, scheme.node_scheme, legend, state.nodes.get(id), function (payload, cleared) {
        var before = state.nodes.get(id);
        if (cleared && before !== undefined) {
          options.undo.push((widgets.titleOf(type) || "Answer") + " of " + id + " cleared", function () {
            state.nodes.set(id, before);
            markRow(id);
            changed();
            if (openId === id) {
              openNode(id);
            }
          });
        }
        if (payload === null) {
          state.nodes.delete(id);
        } else {
          state.nodes.set(id, payload);
        }
        markRow(id);
        changed();
      }));
      widget.element.dataset.scheme = scheme.name;
      panelWidgets.push(widget);
      widgetsBox.appendChild(widget.element);
    });
    options.comparisons.render(part("panel-comparisons"), id).forEach(function (widget) {
      panelWidgets.push(widget);
    });
  }

  function closePanel() {
    if (openId === null) {
      return;
    }
    tree.setOpen(openId, false);
    openId = null;
    panelWidgets = [];
    panel.hidden = true;
    tree.focusCurrent();
  }

  // Opens branch point `id` with the focus in its replies' comparison: on the
  // first pair not answered yet, else on the comparison's first control.
  function openComparison(id) {
    tree.focusRow(tree.indexOf(id));
    openNode(id);
    var box = part("panel-comparisons");
    var unanswered = Array.from(box.querySelectorAll("[data-pair]")).find(function (pair) {
      return !pair.querySelector("input:checked");
    });
    var target = (unanswered || box).querySelector("input, button:not([disabled])");
    if (target) {
      target.focus();
    }
  }

  part("panel-close").addEventListener("click", closePanel);

  return {
    open: openNode,
    openComparison: openComparison,
    close: closePanel,
    // The open message's id, null when the panel is closed.
    openId: function () {
      return openId;
    },
    // The open message's widgets, its own first, then its replies' comparisons.
    widgets: function () {
      return panelWidgets;
    },
  };
}
