/* The marks on each row of the conversation: where each message stands, at
 * a glance and in words (colour only repeats what the words say).
 *
 * Per tree scheme that rates messages, the row shows its answer ("rated 4",
 * a label, "2/3 rated") or "not rated"; for the first path scheme (the one
 * the keys drive), its step on the path ("path step 3"), and the row is
 * tinted; at a branch point, per comparing scheme, whether its replies are
 * compared ("compared", "1/3 compared", "not compared").
 */

import { el } from "./elements.js";
import { comparisonProgress } from "./progress.js";

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

function comparisonMark(scheme, comparison) {
  var progress = comparisonProgress(scheme, comparison);
  if (progress.done) {
    return "compared";
  }
  return progress.answered ? progress.answered + "/" + progress.needed + " compared" : "not compared";
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
      if (!scheme.rates_nodes) {
        return;
      }
      var text = state.nodes.has(id) ? nodeMark(scheme.node_scheme.annotation_type, scheme.node_scheme, state.nodes.get(id)) : "";
      if (text) {
        marks.appendChild(el("span", { class: "mark mark-answer", "data-mark": scheme.name, text: text }));
      } else {
        marks.appendChild(el("span", { class: "mark mark-missing", "data-mark-missing": scheme.name, text: "not rated" }));
      }
    });
    answers.compareSchemes.forEach(function (scheme) {
      var comparison = answers.get(scheme.name).comparisons.get(id);
      if (comparison) {
        var text = comparisonMark(scheme, comparison);
        marks.appendChild(el("span", { class: "mark mark-compare" + (text === "compared" ? " is-done" : ""), "data-compared": scheme.name, text: text }));
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
