/* The questions about the whole conversation on the annotate page: one
 * widget per item-level scheme (a label, a rating, a note, spans, a
 * rubric...), below the tree. The section stays hidden when there are none.
 * It is drawn again when the page turns editable (editing.js) and when a
 * cleared answer is put back (undo.js).
 */

import { el } from "./elements.js";

// options: part, answers (answers.js), widgets (widgets.js), changed
// (autosave.js) and undo (undo.js).
export function buildItemSchemes(options) {
  var answers = options.answers;
  var widgets = options.widgets;
  var changed = options.changed;
  var itemSchemes = answers.itemSchemes;
  var box = options.part("item-schemes");
  if (!itemSchemes.length) {
    return;
  }
  box.hidden = false;
  box.textContent = "";
  box.appendChild(el("h2", { text: "About the whole conversation" }));
  itemSchemes.forEach(function (scheme) {
    var legend = (scheme.description || scheme.name) + (scheme.label_requirement && scheme.label_requirement.required ? " (required)" : "");
    var widget = widgets.track(widgets.build(scheme.annotation_type, scheme, legend, answers.get(scheme.name), function (payload, cleared) {
      if (cleared && answers.has(scheme.name)) {
        var before = answers.get(scheme.name);
        options.undo.push((scheme.description || scheme.name) + " cleared", function () {
          answers.set(scheme.name, before);
          changed();
          buildItemSchemes(options);
        });
      }
      if (payload === null) {
        answers.delete(scheme.name);
      } else {
        answers.set(scheme.name, payload);
      }
      changed();
    }));
    widget.element.dataset.scheme = scheme.name;
    box.appendChild(widget.element);
  });
}
