/* The marks on each tree row: what each message has, at a glance.
 *
 * A row shows one badge per tree scheme that rated the message ("rated 4",
 * a label, "2/3 rated") and, for the first path scheme (the one the keys
 * drive), its step on the path; a row on that path is also tinted.
 */

import { el } from "./elements.js";

function nodeMark(type, config, payload) {
  switch (type) {
    case "likert":
      return "rated " + payload.rating;
    case "radio":
      return payload.label;
    case "multiselect":
      return payload.labels.length ? payload.labels.join(", ") : "";
    case "multirate":
      return Object.keys(payload).length + "/" + config.options.length + " rated";
    case "number":
    case "slider":
      return "= " + payload.value;
    case "text":
      return payload.text ? "note" : "";
    default:
      return "answered";
  }
}

// markRow(id) redraws the marks of message `id` from `answers`.
export function createRowMarks(tree, answers) {
  var treeSchemes = answers.treeSchemes;
  var pathSchemes = answers.pathSchemes;

  return function markRow(id) {
    var row = tree.rowOf(id);
    var marks = row.querySelector("[data-marks]");
    marks.textContent = "";
    treeSchemes.forEach(function (scheme) {
      var state = answers.get(scheme.name);
      if (scheme.rates_nodes && state.nodes.has(id)) {
        var text = nodeMark(scheme.node_scheme.annotation_type, scheme.node_scheme, state.nodes.get(id));
        if (text) {
          marks.appendChild(el("span", { class: "mark mark-answer", "data-mark": scheme.name, text: text }));
        }
      }
    });
    var path = pathSchemes.length ? answers.get(pathSchemes[0].name).path : [];
    var step = path.indexOf(id);
    row.classList.toggle("in-path", step >= 0);
    if (step >= 0) {
      marks.appendChild(el("span", { class: "mark mark-path", text: "path step " + (step + 1) }));
    }
  };
}
