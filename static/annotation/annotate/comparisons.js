/* Branch comparison on the annotate page: at a message with two or more
 * replies, the replies are compared two by two (each pair given one of the
 * scheme's labels) or ranked best first (branch_comparison.mode: ranking).
 *
 * Replies are shown in the order the server stored when it handed the item
 * out (shown_order, shuffled so that position does not sway the judgement)
 * and named by letter in that order. Drawn in the message panel, below the
 * open message's own widgets.
 */

import { el, nextId } from "./elements.js";
import { messageBody } from "./message_body.js";
import { fieldset } from "./widgets.js";

var LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";

function letter(index) {
  return index < LETTERS.length ? LETTERS[index] : "#" + (index + 1);
}

// options: tree (tree_view.js), messages (the item's, as the server sent
// them), spanMode (plain text: message_body.js), answers (answers.js),
// widgets (widgets.js), item ({editable}), markRow (row_marks.js: the branch point's row says
// whether its replies are compared) and changed (autosave.js).
export function createComparisons(options) {
  var tree = options.tree;
  var answers = options.answers;
  var widgets = options.widgets;
  var item = options.item;
  var compareSchemes = answers.compareSchemes;
  var messageById = new Map();
  (options.messages || []).forEach(function (message) {
    messageById.set(message.id, message);
  });

  function changed(parent) {
    options.markRow(parent);
    options.changed();
  }

  // Draws into `box` the comparisons of the replies to `parent`, one per
  // comparing scheme, and returns the pair widgets drawn, in order.
  function renderComparisons(box, parent) {
    var drawn = [];
    box.textContent = "";
    compareSchemes.forEach(function (scheme) {
      var state = answers.get(scheme.name);
      var comparison = state.comparisons.get(parent);
      if (!comparison) {
        return;
      }
      var config = scheme.branch_comparison;
      var order = comparison.shown_order;
      var section = el("section", { class: "comparison", "data-comparison": scheme.name }, [
        el("h3", {}, ["Compare the replies to ", el("code", { text: parent })]),
        config.description ? el("p", { text: config.description }) : null,
      ]);
      var replies = el("ol", { class: "comparison-replies", "data-shown-order": true });
      order.forEach(function (child, index) {
        replies.appendChild(el("li", { "data-reply": child }, [
          el("strong", { class: "reply-letter", text: letter(index) }),
          messageBody(messageById.get(child), { className: "reply-text", spanMode: options.spanMode, name: "reply " + letter(index) }),
        ]));
      });
      section.appendChild(replies);
      if (config.mode === "ranking") {
        section.appendChild(rankingControls(scheme, parent, comparison));
      } else {
        for (var first = 0; first < order.length; first += 1) {
          for (var second = first + 1; second < order.length; second += 1) {
            var widget = pairControl(scheme, parent, comparison, order, first, second);
            drawn.push(widget);
            section.appendChild(widget.element);
          }
        }
      }
      box.appendChild(section);
    });
    return drawn;
  }

  function pairControl(scheme, parent, comparison, order, first, second) {
    var a = order[first];
    var b = order[second];
    var existing = comparison.pairs.find(function (pair) {
      return (pair.a === a && pair.b === b) || (pair.a === b && pair.b === a);
    });
    // Letters only: the ids (resp_a, resp_b) would give away the order the page shuffled.
    var legend = letter(first) + " compared with " + letter(second);
    var widget = widgets.track(pairWidget(legend, scheme.branch_comparison.labels, existing && existing.a === a ? existing.label : null, function (label) {
      comparison.pairs = comparison.pairs.filter(function (pair) {
        return !((pair.a === a && pair.b === b) || (pair.a === b && pair.b === a));
      });
      comparison.pairs.push({ a: a, b: b, label: label });
      changed(parent);
    }));
    widget.element.dataset.pair = a + " " + b;
    return widget;
  }

  // A choice among labels for one pair of compared replies.
  function pairWidget(legend, labels, value, onChange) {
    var name = nextId("pair");
    var inputs = [];
    var group = el("div", { class: "choices" });
    labels.forEach(function (text, index) {
      var choice = widgets.choiceInput("radio", name, text, value === text, text, index < 9 ? index + 1 : null);
      choice.input.addEventListener("change", onChange.bind(null, text));
      inputs.push(choice.input);
      group.appendChild(choice.label);
    });
    return {
      element: fieldset("widget-pair", legend, [group]),
      answered: function () {
        return inputs.some(function (input) {
          return input.checked;
        });
      },
      key: function (digit) {
        if (digit > labels.length || !item.editable) {
          return false;
        }
        inputs[digit - 1].checked = true;
        onChange(labels[digit - 1]);
        return true;
      },
    };
  }

  function rankingControls(scheme, parent, comparison) {
    var ranking = comparison.ranking && comparison.ranking.length ? comparison.ranking.slice() : comparison.shown_order.slice();
    var list = el("ol", { class: "ranking", "aria-label": "Best first" });
    var status = el("p", { class: "ranking-status", text: comparison.ranking && comparison.ranking.length ? "Your ranking is saved." : "Not ranked yet: order the replies, best first, or keep this order." });

    function commit(focusIndex, focusClass) {
      comparison.ranking = ranking.slice();
      changed(parent);
      draw();
      status.textContent = "Your ranking is saved.";
      var button = list.children[focusIndex] && list.children[focusIndex].querySelector(focusClass);
      if (button && !button.disabled) {
        button.focus();
      }
    }

    function draw() {
      list.textContent = "";
      ranking.forEach(function (child, index) {
        var name = letter(comparison.shown_order.indexOf(child));
        var up = el("button", { type: "button", class: "button rank-up", disabled: index === 0 || !item.editable, "aria-label": "Move " + name + " up", text: "Up" });
        var down = el("button", { type: "button", class: "button rank-down", disabled: index === ranking.length - 1 || !item.editable, "aria-label": "Move " + name + " down", text: "Down" });
        up.addEventListener("click", function () {
          ranking.splice(index - 1, 0, ranking.splice(index, 1)[0]);
          commit(index - 1, ".rank-up");
        });
        down.addEventListener("click", function () {
          ranking.splice(index + 1, 0, ranking.splice(index, 1)[0]);
          commit(index + 1, ".rank-down");
        });
        var shownAt = comparison.shown_order.indexOf(child);
        list.appendChild(el("li", { "data-ranked": child }, [
          el("strong", { class: "reply-letter", text: letter(shownAt) }), " ", up, " ", down,
        ]));
      });
    }

    draw();
    var keep = el("button", { type: "button", class: "button", disabled: !item.editable, text: "Keep this order" });
    keep.addEventListener("click", function () {
      commit(0, ".rank-down");
    });
    return el("div", { class: "ranking-box" }, [list, keep, status]);
  }

  return { render: renderComparisons };
}
