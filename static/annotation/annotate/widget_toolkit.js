/* Widgets that come from files of their own: the one global contract of the
 * annotate page.
 *
 * A scheme type the page does not draw itself names a widget_script
 * (annotation/schemes/base.py), a classic script loaded before the page's
 * module (static/annotation/spans.js, static/evaluation/rubric_widget.js).
 * Each registers
 *   window.BranchpointWidgets[type] = {title: "...", build: function (toolkit) {
 *     return function (config, legend, value, onChange) { ... return {element, key}; };
 *   }}
 * and builds its elements with the toolkit below, so it behaves like the
 * page's own widgets. The toolkit's names and meanings are that contract:
 * change them only together with the widget files.
 */

import { el, nextId } from "./elements.js";
import { fieldset, labelIndexForKey, labelName } from "./widgets.js";

// Adds every registered widget file's builder to `widgets`. `item.editable`
// is read here, when the page starts and again when Edit makes a submitted
// item editable (editing.js): the widget files take it as they find it.
// `undo` (undo.js) lets a file's destructive command be taken back:
// toolkit.undo.push(label, restore).
export function registerWidgetFiles(widgets, options) {
  var tree = options.tree;
  var toolkit = {
    el: el,
    fieldset: fieldset,
    choiceInput: widgets.choiceInput,
    labelName: labelName,
    labelIndexForKey: labelIndexForKey,
    nextId: nextId,
    editable: options.item.editable,
    data: options.data,
    rows: function () {
      return tree.rows;
    },
    textOf: tree.textOf,
    roleOf: tree.roleOf,
    currentId: tree.currentId,
    flash: options.flash,
    undo: options.undo,
  };
  var registered = window.BranchpointWidgets || {};
  Object.keys(registered).forEach(function (type) {
    widgets.add(type, registered[type].build(toolkit), registered[type].title || "Answer");
  });
}
