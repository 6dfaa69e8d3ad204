/* Span annotation on the annotate page: the "span" scheme type's widget file.
 *
 * Loaded before annotate.js (the scheme's widget_script), it registers
 * window.BranchpointWidgets.span. The page builds one widget per span scheme
 * in its "whole conversation" section: the list of spans, each with a Delete
 * button. Beyond a widget, it works in the message rows themselves:
 *
 * - select text inside one message (in a linear dialogue or on any node of a
 *   branching tree) and a chooser opens: pick the label, then each attribute,
 *   with their keys (a label's key_value, else 1-9 in order) or with clicks;
 *   the span is added once everything is chosen (Enter adds it earlier when
 *   the rest is optional, Backspace steps back, Esc cancels);
 * - every span is drawn in its message: each covered stretch of text is one
 *   mark, tinted with its innermost span's colour and underlined with one bar
 *   per covering span (outer spans lower), so nested and crossing spans all
 *   show; a mark's title lists its spans.
 *
 * Offsets in payloads count characters as the server does (Unicode code
 * points); the DOM counts UTF-16 units, so offsets are converted both ways.
 * Text goes into the page with textContent only.
 */
(function () {
  "use strict";

  var PALETTE = ["#2563eb", "#16a34a", "#d97706", "#9333ea", "#dc2626", "#0891b2", "#65a30d", "#db2777"];
  var BAR_PX = 3;

  function build(toolkit) {
    var el = toolkit.el;
    var editable = toolkit.editable;
    var widgets = [];
    var active = null;
    var chooser = null;
    var started = false;

    // -- offsets ----------------------------------------------------------------

    function units(text, points) {
      return Array.from(text).slice(0, points).join("").length;
    }

    function points(text, unitOffset) {
      return Array.from(text.slice(0, unitOffset)).length;
    }

    function slice(text, start, end) {
      return Array.from(text).slice(start, end).join("");
    }

    // -- where spans live ---------------------------------------------------------

    function rowById(id) {
      var rows = toolkit.rows();
      for (var index = 0; index < rows.length; index += 1) {
        if (rows[index].dataset.id === id) {
          return rows[index];
        }
      }
      return null;
    }

    function nodeOrder() {
      var order = new Map();
      toolkit.rows().forEach(function (row, index) {
        order.set(row.dataset.id, index);
      });
      return order;
    }

    function labelName(label) {
      return toolkit.labelName(label);
    }

    // The label's colour set through the element's style object: the site's Content-Security-
    // Policy refuses style attributes, not styles set from a script.
    function swatch(colour) {
      var element = el("span", { class: "span-swatch", "aria-hidden": "true" });
      element.style.background = colour;
      return element;
    }

    function colourOf(widget, labelText) {
      var labels = widget.config.labels;
      for (var index = 0; index < labels.length; index += 1) {
        if (labelName(labels[index]) === labelText) {
          return (typeof labels[index] === "object" && labels[index].color) || PALETTE[index % PALETTE.length];
        }
      }
      return PALETTE[0];
    }

    function describe(span) {
      var parts = Object.keys(span.attributes || {}).map(function (name) {
        return name + " " + span.attributes[name];
      });
      return span.label + (parts.length ? " (" + parts.join(", ") + ")" : "") + ": “" + span.text + "”";
    }

    function sortSpans(widget) {
      var order = nodeOrder();
      var names = (widget.config.attributes || []).map(function (attribute) {
        return attribute.name;
      });
      function key(span) {
        return names.map(function (name) {
          return (span.attributes || {})[name] || "";
        }).join("\u0000");
      }
      widget.spans.sort(function (a, b) {
        return (order.get(a.node) - order.get(b.node)) || (a.start - b.start) || (a.end - b.end) ||
          (a.label < b.label ? -1 : a.label > b.label ? 1 : 0) || (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0);
      });
    }

    function save(widget) {
      sortSpans(widget);
      widget.onChange({
        spans: widget.spans.map(function (span) {
          return { node: span.node, start: span.start, end: span.end, text: span.text, label: span.label, attributes: span.attributes || {} };
        }),
      });
    }

    // -- drawing spans in the messages ----------------------------------------------

    function paint(nodeId, pending) {
      var row = rowById(nodeId);
      if (!row) {
        return;
      }
      var box = row.querySelector(".node-text");
      var text = toolkit.textOf(nodeId);
      var covering = [];
      widgets.forEach(function (widget) {
        widget.spans.forEach(function (span, index) {
          if (span.node === nodeId) {
            covering.push({
              start: units(text, span.start),
              end: units(text, span.end),
              colour: colourOf(widget, span.label),
              title: (widgets.length > 1 ? widget.config.name + ": " : "") + describe(span),
              id: widget.config.name + ":" + index,
            });
          }
        });
      });
      if (pending && pending.node === nodeId) {
        covering.push({ start: pending.startUnit, end: pending.endUnit, colour: "#6b7280", title: "new span", id: "pending", pending: true });
      }
      // Outer spans first, each on the lowest bar no overlapping span took.
      covering.sort(function (a, b) {
        return (a.start - b.start) || (b.end - a.end);
      });
      covering.forEach(function (span, index) {
        var taken = new Set();
        covering.slice(0, index).forEach(function (other) {
          if (other.start < span.end && span.start < other.end) {
            taken.add(other.level);
          }
        });
        span.level = 0;
        while (taken.has(span.level)) {
          span.level += 1;
        }
      });
      var cuts = new Set([0, text.length]);
      covering.forEach(function (span) {
        cuts.add(span.start);
        cuts.add(span.end);
      });
      var edges = Array.from(cuts).sort(function (a, b) {
        return a - b;
      });
      box.textContent = "";
      for (var index = 0; index + 1 < edges.length; index += 1) {
        var from = edges[index];
        var to = edges[index + 1];
        var piece = text.slice(from, to);
        var over = covering.filter(function (span) {
          return span.start <= from && span.end >= to;
        });
        if (!over.length) {
          box.appendChild(document.createTextNode(piece));
          continue;
        }
        box.appendChild(mark(piece, over));
      }
    }

    function mark(piece, over) {
      over.sort(function (a, b) {
        return a.level - b.level;
      });
      var innermost = over[over.length - 1];
      var element = el("mark", {
        class: "span-mark" + (innermost.pending ? " span-pending" : ""),
        title: over.map(function (span) {
          return span.title;
        }).join("\n"),
        "data-spans": over.map(function (span) {
          return span.id;
        }).join(" "),
        text: piece,
      });
      var deepest = over[over.length - 1].level;
      element.style.backgroundColor = "color-mix(in srgb, " + innermost.colour + " 18%, transparent)";
      element.style.backgroundImage = over.map(function (span) {
        return "linear-gradient(" + span.colour + ", " + span.colour + ")";
      }).join(", ");
      element.style.backgroundSize = over.map(function () {
        return "100% " + BAR_PX + "px";
      }).join(", ");
      element.style.backgroundPosition = over.map(function (span) {
        return "0 calc(100% - " + span.level * BAR_PX + "px)";
      }).join(", ");
      element.style.paddingBottom = (deepest + 1) * BAR_PX + "px";
      return element;
    }

    function paintAll() {
      var nodes = new Set();
      widgets.forEach(function (widget) {
        widget.spans.forEach(function (span) {
          nodes.add(span.node);
        });
      });
      nodes.forEach(function (node) {
        paint(node, null);
      });
    }

    // -- the list of spans ----------------------------------------------------------

    function drawList(widget, focusIndex) {
      var list = widget.list;
      list.textContent = "";
      if (!widget.spans.length) {
        list.appendChild(el("li", { class: "span-empty", text: "No spans yet: select text in a message." }));
      }
      widget.spans.forEach(function (span, index) {
        var remove = el("button", {
          type: "button",
          class: "button span-delete",
          disabled: !editable,
          "aria-label": "Delete " + describe(span) + " in message " + span.node,
          text: "Delete",
        });
        remove.addEventListener("click", function () {
          var removed = widget.spans.splice(index, 1)[0];
          save(widget);
          paint(removed.node, null);
          drawList(widget, Math.min(index, widget.spans.length - 1));
          toolkit.flash("Deleted the span " + describe(removed) + ".");
          if (toolkit.undo) {
            toolkit.undo.push("Span deleted", function () {
              widget.spans.push(removed);
              save(widget); // sorts the spans back in place
              paint(removed.node, null);
              drawList(widget);
            });
          }
        });
        var item = el("li", {
          class: "span-item",
          "data-span": index,
          "data-node": span.node,
          "data-start": span.start,
          "data-end": span.end,
          "data-label": span.label,
        }, [
          swatch(colourOf(widget, span.label)),
          el("code", { class: "span-node", text: span.node }),
          " ",
          el("q", { class: "span-text", text: span.text }),
          " ",
          el("strong", { class: "span-label", text: span.label }),
          Object.keys(span.attributes || {}).length
            ? el("span", {
                class: "span-attributes",
                text: " " + Object.keys(span.attributes).map(function (name) {
                  return name + "=" + span.attributes[name];
                }).join(" "),
              })
            : null,
          el("span", { class: "muted span-offsets", text: " " + span.start + "–" + span.end + " " }),
          remove,
        ]);
        list.appendChild(item);
      });
      if (focusIndex !== undefined && focusIndex >= 0 && list.children[focusIndex]) {
        var button = list.children[focusIndex].querySelector("button");
        if (button) {
          button.focus();
        }
      }
    }

    // -- the chooser for a new span -------------------------------------------------

    function steps(widget) {
      var list = [{ key: "label", title: "Label", labels: widget.config.labels, required: true }];
      (widget.config.attributes || []).forEach(function (attribute) {
        list.push({
          key: attribute.name,
          title: attribute.description || attribute.name,
          labels: attribute.labels,
          required: attribute.required !== false,
          attribute: true,
        });
      });
      return list;
    }

    function chosen(pending, step) {
      return step.attribute ? pending.attributes[step.key] : pending.label;
    }

    function choose(pending, step, value) {
      if (step.attribute) {
        pending.attributes[step.key] = value;
      } else {
        pending.label = value;
      }
    }

    function ready(pending) {
      return pending.steps.every(function (step) {
        return !step.required || chosen(pending, step);
      });
    }

    function complete(pending) {
      return pending.steps.every(function (step) {
        return chosen(pending, step);
      });
    }

    function currentStep(pending) {
      return pending.steps.find(function (step) {
        return !chosen(pending, step);
      }) || null;
    }

    function keyIndex(labels, key) {
      for (var index = 0; index < labels.length; index += 1) {
        if (typeof labels[index] === "object" && labels[index].key_value === key) {
          return index;
        }
      }
      return /^[1-9]$/.test(key) ? toolkit.labelIndexForKey(labels, parseInt(key, 10)) : -1;
    }

    function keyHint(labels, index) {
      var label = labels[index];
      if (typeof label === "object" && label.key_value) {
        return label.key_value;
      }
      return index < 9 ? String(index + 1) : null;
    }

    function openChooser(widget, nodeId, startUnit, endUnit) {
      closeChooser(false);
      var text = toolkit.textOf(nodeId);
      var pending = {
        widget: widget,
        node: nodeId,
        startUnit: startUnit,
        endUnit: endUnit,
        start: points(text, startUnit),
        end: points(text, endUnit),
        text: text.slice(startUnit, endUnit),
        label: null,
        attributes: {},
        steps: steps(widget),
      };
      var box = el("section", {
        class: "span-chooser",
        role: "dialog",
        "aria-label": "New span",
        tabindex: "-1",
        "data-span-chooser": widget.config.name,
      });
      chooser = { element: box, pending: pending };
      drawChooser();
      document.body.appendChild(box);
      paint(nodeId, pending);
      box.addEventListener("keydown", chooserKey);
      box.focus({ preventScroll: true });
    }

    function drawChooser() {
      var box = chooser.element;
      var pending = chooser.pending;
      var step = currentStep(pending);
      box.textContent = "";
      box.appendChild(el("h3", {}, [
        "New span in ",
        el("code", { text: pending.node }),
        widgets.length > 1 ? " (" + pending.widget.config.name + ")" : null,
      ]));
      box.appendChild(el("p", { class: "span-chooser-text" }, [el("q", { text: pending.text })]));
      pending.steps.forEach(function (each) {
        var group = el("div", {
          class: "choices span-step" + (each === step ? " is-current" : ""),
          role: "group",
          "aria-label": each.title,
          "data-step": each.key,
        }, [el("span", { class: "span-step-title", text: each.title + (each.required ? "" : " (optional)") })]);
        each.labels.forEach(function (label, index) {
          var name = labelName(label);
          var hint = each === step ? keyHint(each.labels, index) : null;
          var button = el("button", {
            type: "button",
            class: "button span-choice" + (chosen(pending, each) === name ? " is-chosen" : ""),
            "aria-pressed": chosen(pending, each) === name ? "true" : "false",
            "data-choice": name,
          }, [hint ? el("kbd", { text: hint }) : null, hint ? " " : null, name]);
          button.addEventListener("click", function () {
            choose(pending, each, name);
            advance();
          });
          group.appendChild(button);
        });
        box.appendChild(group);
      });
      var add = el("button", { type: "button", class: "button button-primary", disabled: !ready(pending), "data-span-add": true }, ["Add ", el("kbd", { text: "Enter" })]);
      add.addEventListener("click", addPending);
      var cancel = el("button", { type: "button", class: "button", "data-span-cancel": true }, ["Cancel ", el("kbd", { text: "Esc" })]);
      cancel.addEventListener("click", function () {
        closeChooser(true);
      });
      box.appendChild(el("div", { class: "span-chooser-actions" }, [add, " ", cancel]));
    }

    function advance() {
      if (complete(chooser.pending)) {
        addPending();
        return;
      }
      drawChooser();
      chooser.element.focus({ preventScroll: true });
    }

    function chooserKey(event) {
      if (event.ctrlKey || event.metaKey || event.altKey) {
        return; // Ctrl+Enter still submits the item
      }
      var pending = chooser.pending;
      if (event.key === "Escape") {
        closeChooser(true);
      } else if (event.key === "Enter" && event.target === chooser.element) {
        if (ready(pending)) {
          addPending();
        }
      } else if (event.key === "Backspace") {
        var answered = pending.steps.filter(function (step) {
          return chosen(pending, step);
        });
        if (answered.length) {
          choose(pending, answered[answered.length - 1], undefined);
          drawChooser();
          chooser.element.focus({ preventScroll: true });
        }
      } else {
        var step = currentStep(pending);
        var index = step ? keyIndex(step.labels, event.key) : -1;
        if (index < 0) {
          if (event.key !== "Tab" && event.key !== "Enter" && event.key !== " ") {
            event.stopPropagation(); // the page's own keys do not act behind the chooser
          }
          return;
        }
        choose(pending, step, labelName(step.labels[index]));
        advance();
      }
      event.preventDefault();
      event.stopPropagation();
    }

    function addPending() {
      var pending = chooser.pending;
      var widget = pending.widget;
      var attributes = {};
      (widget.config.attributes || []).forEach(function (attribute) {
        if (pending.attributes[attribute.name]) {
          attributes[attribute.name] = pending.attributes[attribute.name];
        }
      });
      var span = { node: pending.node, start: pending.start, end: pending.end, text: pending.text, label: pending.label, attributes: attributes };
      var same = widget.spans.some(function (other) {
        return other.node === span.node && other.start === span.start && other.end === span.end &&
          other.label === span.label && JSON.stringify(other.attributes) === JSON.stringify(span.attributes);
      });
      closeChooser(false);
      if (same) {
        toolkit.flash("That span is already there.");
        paint(span.node, null);
        return;
      }
      widget.spans.push(span);
      save(widget);
      paint(span.node, null);
      drawList(widget);
      toolkit.flash("Added the span " + describe(span) + " in message " + span.node + ".");
      focusRow(span.node);
    }

    function closeChooser(cancelled) {
      if (!chooser) {
        return;
      }
      var node = chooser.pending.node;
      chooser.element.remove();
      chooser = null;
      var selection = window.getSelection();
      if (selection) {
        selection.removeAllRanges();
      }
      if (cancelled) {
        paint(node, null);
        focusRow(node);
      }
    }

    function focusRow(node) {
      var row = rowById(node);
      if (row) {
        row.focus({ preventScroll: true });
      }
    }

    // -- selecting text -----------------------------------------------------------

    function offsetIn(box, container, offset) {
      var range = document.createRange();
      range.selectNodeContents(box);
      range.setEnd(container, offset);
      return range.toString().length;
    }

    function textBox(node) {
      var element = node && node.nodeType === 1 ? node : node && node.parentElement;
      return element ? element.closest(".node-text") : null;
    }

    function selectionEnded() {
      if (!editable || !active || chooser) {
        return;
      }
      var selection = window.getSelection();
      if (!selection || selection.isCollapsed || !selection.rangeCount) {
        return;
      }
      var range = selection.getRangeAt(0);
      var startBox = textBox(range.startContainer);
      var endBox = textBox(range.endContainer);
      if (!startBox && !endBox) {
        return;
      }
      if (startBox !== endBox) {
        toolkit.flash("A span lies within one message: select text inside a single message.");
        return;
      }
      var row = startBox.closest(".node[data-id]");
      var text = toolkit.textOf(row.dataset.id);
      var start = offsetIn(startBox, range.startContainer, range.startOffset);
      var end = offsetIn(startBox, range.endContainer, range.endOffset);
      // Spans hold words, not the spaces around them.
      while (start < end && /\s/.test(text[start])) {
        start += 1;
      }
      while (end > start && /\s/.test(text[end - 1])) {
        end -= 1;
      }
      if (start < end) {
        openChooser(active, row.dataset.id, start, end);
      }
    }

    function start() {
      if (started) {
        return;
      }
      started = true;
      var rows = toolkit.rows();
      if (rows.length) {
        // On the conversation's section, so that the rows keep it in the focus view too.
        (rows[0].closest(".annotate-tree") || rows[0].parentNode).classList.add("has-spans");
      }
      document.addEventListener("mouseup", function (event) {
        if (!chooser || !chooser.element.contains(event.target)) {
          setTimeout(selectionEnded, 0);
        }
      });
      document.addEventListener("keyup", function (event) {
        if (event.shiftKey && !chooser) {
          selectionEnded();
        }
      });
      var help = document.querySelector("[data-help] tbody");
      if (help && editable) {
        help.appendChild(el("tr", {}, [
          el("th", { scope: "row", text: "Select text in a message" }),
          el("td", { text: "make a span: then its label and attributes with their keys (1–9), Enter to add, Backspace to go back, Esc to cancel" }),
        ]));
      }
    }

    return function (config, legend, value, onChange) {
      var widget = {
        config: config,
        onChange: onChange,
        spans: (value && Array.isArray(value.spans) ? value.spans : []).map(function (span) {
          return { node: span.node, start: span.start, end: span.end, text: span.text, label: span.label, attributes: span.attributes || {} };
        }),
        list: el("ul", { class: "span-list", "data-span-list": config.name, "aria-live": "polite" }),
      };
      widgets.push(widget);
      if (!active) {
        active = widget;
      }
      start();
      var hint = el("p", { class: "muted", text: editable ? "Select text in a message to add a span; spans may nest and overlap." : "" });
      var element = toolkit.fieldset("widget-span", legend, [hint, widget.list]);
      element.addEventListener("focusin", function () {
        active = widget;
      });
      sortSpans(widget);
      drawList(widget);
      paintAll();
      return {
        element: element,
        key: function () {
          return false;
        },
      };
    };
  }

  window.BranchpointWidgets = window.BranchpointWidgets || {};
  window.BranchpointWidgets.span = { title: "Spans", build: build };
})();
