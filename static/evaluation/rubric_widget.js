/* The rubric widget of the annotate page (annotation type "rubric", see evaluation/schemes.py).
 *
 * Registers window.BranchpointWidgets.rubric (the annotate page's widget
 * hook): one yes/no question per criterion and gate of the linked rubric,
 * and a note. Keys: y answers the highlighted question yes, n no (1 and 2 do
 * the same while the widget holds the focus); the highlight then moves to the
 * next unanswered question. Tab and the arrow keys work as on any radio group.
 *
 * Payloads (evaluation/judgments.py):
 *   conversation  {criteria: {key: true|false}, note}
 *   path          {path: [root, ..., last], criteria, note}: the path to the
 *                 focused message, chosen with the widget's button (or on the
 *                 first answer); choosing another path starts its answers afresh
 *   node          {nodes: {id: {criteria, note}}}: answers for the focused message
 * Text goes in with textContent only. No globals beyond the registration.
 */
(function () {
  "use strict";

  var instances = [];

  function isTextEntry(target) {
    if (!target || !target.tagName) {
      return false;
    }
    if (target.isContentEditable || target.tagName === "TEXTAREA" || target.tagName === "SELECT") {
      return true;
    }
    return target.tagName === "INPUT" && ["radio", "checkbox", "button", "submit"].indexOf(target.type) < 0;
  }

  document.addEventListener("keydown", function (event) {
    if (event.defaultPrevented || event.altKey || event.ctrlKey || event.metaKey || isTextEntry(event.target)) {
      return;
    }
    if (event.key !== "y" && event.key !== "n") {
      return;
    }
    if (document.querySelector("dialog[open]")) {
      return;
    }
    // Only the widgets on the page: the annotate page draws them again when Edit makes it editable.
    var shown = instances.filter(function (instance) {
      return instance.element.isConnected;
    });
    var holder = shown.find(function (instance) {
      return instance.element.contains(document.activeElement);
    }) || shown[0];
    if (holder && holder.answerCurrent(event.key === "y")) {
      event.preventDefault();
    }
  });

  function build(toolkit) {
    var el = toolkit.el;

    return function (config, legend, value, onChange) {
      var editable = toolkit.editable;
      var target = config.target || "conversation";
      var questions = (config.criteria || []).map(function (criterion) {
        return { key: criterion.key, question: criterion.question, tag: "weight " + criterion.weight };
      }).concat((config.gates || []).map(function (gate) {
        return { key: gate.key, question: gate.question, tag: "gate" };
      }));
      var state = copy(value) || {};
      var parents = new Map();
      toolkit.rows().forEach(function (row) {
        parents.set(row.dataset.id, row.dataset.parent === undefined ? null : row.dataset.parent);
      });
      var nodeId = target === "node" ? toolkit.currentId() : null;
      var current = 0;

      function copy(object) {
        return object ? JSON.parse(JSON.stringify(object)) : null;
      }

      // The {criteria, note} being answered: the item's, or the focused node's.
      function answer(create) {
        if (target !== "node") {
          if (!state.criteria) {
            state.criteria = {};
          }
          return state;
        }
        state.nodes = state.nodes || {};
        if (!state.nodes[nodeId] && create) {
          state.nodes[nodeId] = { criteria: {} };
        }
        return state.nodes[nodeId] || { criteria: {} };
      }

      function pathTo(id) {
        var path = [];
        while (id !== null && id !== undefined && parents.has(id)) {
          path.unshift(id);
          id = parents.get(id);
        }
        return path;
      }

      function payload() {
        if (target === "node") {
          var nodes = {};
          Object.keys(state.nodes || {}).forEach(function (id) {
            var entry = state.nodes[id];
            if (Object.keys(entry.criteria || {}).length || entry.note) {
              nodes[id] = entry;
            }
          });
          return Object.keys(nodes).length ? { nodes: nodes } : null;
        }
        var result = { criteria: state.criteria || {} };
        if (state.note) {
          result.note = state.note;
        }
        if (target === "path") {
          result.path = state.path || [];
        }
        return Object.keys(result.criteria).length || result.note ? result : null;
      }

      function changed() {
        onChange(copy(payload()));
      }

      var rows = [];
      var list = el("ol", { class: "rubric-questions" });
      questions.forEach(function (question, index) {
        var name = toolkit.nextId("rubric");
        var yes = toolkit.choiceInput("radio", name, "yes", false, "Yes", null);
        var no = toolkit.choiceInput("radio", name, "no", false, "No", null);
        yes.label.insertBefore(el("kbd", { class: "choice-key", text: "y" }), yes.label.lastChild);
        no.label.insertBefore(el("kbd", { class: "choice-key", text: "n" }), no.label.lastChild);
        var textId = toolkit.nextId("rubric-question");
        var item = el("li", { class: "rubric-question", "data-criterion": question.key }, [
          el("p", { class: "rubric-question-text", id: textId }, [
            el("span", { text: question.question }),
            " ",
            el("span", { class: "muted", text: "(" + question.key + ", " + question.tag + ")" }),
          ]),
          el("div", { class: "choices", role: "radiogroup", "aria-labelledby": textId }, [yes.label, no.label]),
        ]);
        yes.input.addEventListener("change", function () {
          set(index, true, false);
        });
        no.input.addEventListener("change", function () {
          set(index, false, false);
        });
        item.addEventListener("focusin", function () {
          highlight(index);
        });
        rows.push({ item: item, yes: yes.input, no: no.input });
        list.appendChild(item);
      });

      var noteId = toolkit.nextId("rubric-note");
      var note = el("textarea", { id: noteId, rows: 2, maxlength: 5000, disabled: !editable, class: "rubric-note" });
      note.addEventListener("input", function () {
        answer(true).note = note.value;
        changed();
      });

      var where = el("p", { class: "rubric-target", "aria-live": "polite" });
      var choosePath = null;
      if (target === "path") {
        choosePath = el("button", { type: "button", class: "button", disabled: !editable, text: "Judge the path to the focused message" });
        choosePath.addEventListener("click", function () {
          var path = pathTo(toolkit.currentId());
          if (JSON.stringify(path) !== JSON.stringify(state.path || [])) {
            state.path = path;
            state.criteria = {};
            state.note = "";
            draw();
            changed();
          }
        });
      }

      var parts = [
        where,
        choosePath,
        el("p", { class: "muted rubric-help", text: "y: yes, n: no for the highlighted question; the highlight then moves on." }),
        list,
        el("label", { for: noteId, class: "rubric-note-label", text: "Note (optional)" }),
        note,
      ];
      if (config.missing) {
        parts = [el("p", { class: "error", text: "The rubric “" + config.rubric + "” no longer exists." })];
      }
      var element = toolkit.fieldset("widget-rubric", legend, parts);
      element.dataset.rubric = config.rubric || "";

      function firstOpen(from) {
        var answers = answer(false).criteria || {};
        for (var step = 0; step < questions.length; step += 1) {
          var index = (from + step) % questions.length;
          if (typeof answers[questions[index].key] !== "boolean") {
            return index;
          }
        }
        return -1;
      }

      function highlight(index) {
        current = Math.max(0, Math.min(index, questions.length - 1));
        rows.forEach(function (row, position) {
          row.item.classList.toggle("is-current", position === current);
          if (position === current) {
            row.item.setAttribute("aria-current", "step");
          } else {
            row.item.removeAttribute("aria-current");
          }
        });
      }

      function draw() {
        var answers = answer(false);
        rows.forEach(function (row, index) {
          var given = (answers.criteria || {})[questions[index].key];
          row.yes.checked = given === true;
          row.no.checked = given === false;
          row.yes.disabled = row.no.disabled = !editable || (target === "node" && nodeId === null);
        });
        note.value = answers.note || "";
        if (target === "node") {
          where.textContent = nodeId === null ? "Focus a message to judge it." : "Judging message " + nodeId + " (" + toolkit.roleOf(nodeId) + "); move to another with j / k.";
        } else if (target === "path") {
          var path = state.path || [];
          where.textContent = path.length ? "Judging the path " + path.join(" → ") + "." : "Judging the path to the focused message (chosen on your first answer).";
        } else {
          where.textContent = "";
          where.hidden = true;
        }
        var open = firstOpen(0);
        highlight(open < 0 ? current : open);
      }

      function set(index, yes, fromKey) {
        if (!editable || (target === "node" && nodeId === null)) {
          return false;
        }
        if (target === "path" && !(state.path && state.path.length)) {
          state.path = pathTo(toolkit.currentId());
        }
        answer(true).criteria[questions[index].key] = yes;
        rows[index].yes.checked = yes;
        rows[index].no.checked = !yes;
        var next = firstOpen(index + 1);
        if (next < 0) {
          next = Math.min(index + 1, questions.length - 1);
        }
        var hadFocus = element.contains(document.activeElement);
        highlight(next);
        if (fromKey && hadFocus) {
          var row = rows[current];
          (row.no.checked ? row.no : row.yes).focus();
        }
        if (target === "path") {
          draw();
        }
        changed();
        return true;
      }

      var instance = {
        element: element,
        answerCurrent: function (yes) {
          return questions.length > 0 && set(current, yes, true);
        },
      };
      instances.push(instance);

      if (target === "node") {
        document.addEventListener("focusin", function (event) {
          var row = event.target.closest ? event.target.closest(".node[data-id]") : null;
          if (row && row.dataset.id !== nodeId) {
            nodeId = row.dataset.id;
            draw();
          }
        });
      }
      draw();

      return {
        element: element,
        key: function (digit) {
          if (digit !== 1 && digit !== 2) {
            return false;
          }
          return instance.answerCurrent(digit === 1);
        },
      };
    };
  }

  window.BranchpointWidgets = window.BranchpointWidgets || {};
  window.BranchpointWidgets.rubric = { title: "Rubric", build: build };
})();
