/* Span annotation on the annotate page: the "span" scheme type's widget file.
 *
 * Loaded before annotate.js (the scheme's widget_script), it registers
 * window.BranchpointWidgets.span. The page builds one widget per span scheme
 * in its "whole conversation" section: the list of spans, each with a Delete
 * button. Beyond a widget, it works in the message rows themselves:
 *
 * - the label palette, above the conversation: each label with its key and
 *   colour, there before anything is selected; a label clicked while text is
 *   selected labels it;
 * - select text inside one message (in a linear dialogue or on any node of a
 *   branching tree) and a chooser opens: pick the label, then each attribute,
 *   with their keys (a label's key_value, else 1-9 in order) or with clicks;
 *   the span is added once everything is chosen (Enter adds it earlier when
 *   the rest is optional, Backspace steps back, Esc cancels). The chooser is
 *   placed below or above the selected line, never over the selected text;
 * - caret mode, for the keyboard alone: s on a focused message row puts a
 *   caret in its text; arrows move it by character, Ctrl or Alt with them by
 *   word, Home and End to the ends, Shift extends the selection, and a label
 *   key makes the span (Enter opens the chooser, Esc leaves). A polite live
 *   region says where the caret is and what is selected;
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
    // The message in caret mode: {node, box, anchor, focus}, offsets in code points.
    var caret = null;
    var palettes = null;
    var caretStatus = null;

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

    // Draws the message's spans, the pending one, and in caret mode the caret and its selection.
    function paint(nodeId, pending) {
      var caretAt = caret && caret.node === nodeId ? units(toolkit.textOf(nodeId), caret.focus) : -1;
      if (caretAt >= 0 && !pending) {
        pending = caretPending();
      }
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
      if (caretAt >= 0) {
        cuts.add(caretAt);
      }
      var edges = Array.from(cuts).sort(function (a, b) {
        return a - b;
      });
      box.textContent = "";
      for (var index = 0; index + 1 < edges.length; index += 1) {
        var from = edges[index];
        var to = edges[index + 1];
        var piece = text.slice(from, to);
        if (from === caretAt) {
          box.appendChild(caretMark());
        }
        var over = covering.filter(function (span) {
          return span.start <= from && span.end >= to;
        });
        if (!over.length) {
          box.appendChild(document.createTextNode(piece));
          continue;
        }
        box.appendChild(mark(piece, over));
      }
      if (caretAt >= 0 && caretAt === text.length) {
        box.appendChild(caretMark());
      }
    }

    function caretMark() {
      return el("span", { class: "span-caret", "aria-hidden": "true", "data-span-caret": true });
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

    // A new span over units startUnit-endUnit of the message: added at once when
    // options.label leaves nothing to choose, else the chooser asks for the rest.
    // options.fromCaret: the caret mode to go back to afterwards.
    function openChooser(widget, nodeId, startUnit, endUnit, options) {
      closeChooser(false);
      options = options || {};
      var text = toolkit.textOf(nodeId);
      var pending = {
        widget: widget,
        node: nodeId,
        startUnit: startUnit,
        endUnit: endUnit,
        start: points(text, startUnit),
        end: points(text, endUnit),
        text: text.slice(startUnit, endUnit),
        label: options.label || null,
        attributes: {},
        steps: steps(widget),
        fromCaret: options.fromCaret || null,
      };
      if (complete(pending)) {
        commit(pending);
        return;
      }
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
      // Focused first: leaving caret mode on the way may move the text the chooser is placed by.
      box.focus({ preventScroll: true });
      var marked = rowById(nodeId).querySelector(".span-pending");
      if (marked) {
        marked.scrollIntoView({ block: "nearest" });
      }
      placeChooser();
    }

    // The selected text's box on screen: its line(s), which the chooser must leave in view.
    function selectedRect(pending) {
      var box = rowById(pending.node).querySelector(".node-text");
      var range = document.createRange();
      var seen = 0;
      var walker = document.createTreeWalker(box, NodeFilter.SHOW_TEXT);
      for (var text = walker.nextNode(); text; text = walker.nextNode()) {
        if (pending.startUnit >= seen && pending.startUnit <= seen + text.length) {
          range.setStart(text, pending.startUnit - seen);
        }
        if (pending.endUnit >= seen && pending.endUnit <= seen + text.length) {
          range.setEnd(text, pending.endUnit - seen);
          break;
        }
        seen += text.length;
      }
      return range.getBoundingClientRect();
    }

    // Below the selected line when the chooser fits there, else above it, else on
    // the roomier side, scrolling inside itself: it never covers the selected text.
    function placeChooser() {
      if (!chooser || !rowById(chooser.pending.node)) {
        return;
      }
      var box = chooser.element;
      var gap = 8;
      var rect = selectedRect(chooser.pending);
      var width = document.documentElement.clientWidth;
      var height = window.innerHeight;
      box.style.maxHeight = "";
      var size = box.getBoundingClientRect();
      var below = height - rect.bottom - 2 * gap;
      var above = rect.top - 2 * gap;
      var top;
      if (size.height <= below || (size.height > above && below >= above)) {
        top = rect.bottom + gap;
        box.style.maxHeight = Math.max(below, 0) + "px";
      } else {
        box.style.maxHeight = Math.max(above, 0) + "px";
        top = rect.top - gap - Math.min(size.height, Math.max(above, 0));
      }
      box.style.top = top + "px";
      box.style.left = Math.max(gap, Math.min(rect.left, width - size.width - gap)) + "px";
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
      closeChooser(false);
      commit(pending);
    }

    function commit(pending) {
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
      if (same) {
        toolkit.flash("That span is already there.");
      } else {
        widget.spans.push(span);
        save(widget);
        drawList(widget);
        toolkit.flash("Added the span " + describe(span) + " in message " + span.node + ".");
      }
      if (pending.fromCaret) {
        // Back in caret mode, just after the new span, for the next one.
        enterCaret(span.node, span.end, span.end);
      } else {
        paint(span.node, null);
        focusRow(span.node);
      }
    }

    function closeChooser(cancelled) {
      if (!chooser) {
        return;
      }
      var pending = chooser.pending;
      chooser.element.remove();
      chooser = null;
      var selection = window.getSelection();
      if (selection) {
        selection.removeAllRanges();
      }
      if (cancelled && pending.fromCaret) {
        enterCaret(pending.node, pending.fromCaret.anchor, pending.fromCaret.focus);
      } else if (cancelled) {
        paint(pending.node, null);
        focusRow(pending.node);
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

    // The text selected with the mouse, trimmed of the spaces around it: {node, start, end} in units, or null.
    function selectedStretch() {
      var selection = window.getSelection();
      if (!selection || selection.isCollapsed || !selection.rangeCount) {
        return null;
      }
      var range = selection.getRangeAt(0);
      var startBox = textBox(range.startContainer);
      var endBox = textBox(range.endContainer);
      if (!startBox && !endBox) {
        return null;
      }
      if (startBox !== endBox) {
        toolkit.flash("A span lies within one message: select text inside a single message.");
        return null;
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
      return start < end ? { node: row.dataset.id, start: start, end: end } : null;
    }

    function selectionEnded() {
      if (!editable || !active || chooser) {
        return;
      }
      var stretch = selectedStretch();
      if (stretch) {
        openChooser(active, stretch.node, stretch.start, stretch.end);
      }
    }

    // -- caret mode: spans by keyboard ---------------------------------------------

    function isWordCharacter(character) {
      return /[\p{L}\p{N}\p{M}_]/u.test(character);
    }

    // Where the caret lands from `at` (code points) on a key: by character, by word, or to an end.
    function caretMove(characters, at, key, byWord) {
      var length = characters.length;
      if (key === "Home") {
        return 0;
      }
      if (key === "End") {
        return length;
      }
      var step = key === "ArrowRight" ? 1 : -1;
      if (!byWord) {
        return Math.max(0, Math.min(length, at + step));
      }
      // By word: over what lies between words, then to the word's far end.
      var next = step > 0 ? at : at - 1;
      while (next >= 0 && next < length && !isWordCharacter(characters[next])) {
        next += step;
      }
      while (next >= 0 && next < length && isWordCharacter(characters[next])) {
        next += step;
      }
      return step > 0 ? Math.min(next, length) : Math.max(next + 1, 0);
    }

    // The caret's selection, trimmed of spaces: {start, end} in code points (start === end when empty).
    function caretSelection() {
      var characters = Array.from(toolkit.textOf(caret.node));
      var start = Math.min(caret.anchor, caret.focus);
      var end = Math.max(caret.anchor, caret.focus);
      while (start < end && /\s/.test(characters[start])) {
        start += 1;
      }
      while (end > start && /\s/.test(characters[end - 1])) {
        end -= 1;
      }
      return { start: start, end: end };
    }

    function caretPending() {
      var chosen = caretSelection();
      if (chosen.start === chosen.end) {
        return null;
      }
      var text = toolkit.textOf(caret.node);
      return { node: caret.node, startUnit: units(text, chosen.start), endUnit: units(text, chosen.end), pending: true };
    }

    function announce(message) {
      if (caretStatus) {
        caretStatus.textContent = message;
      }
    }

    function describeCaret() {
      var characters = Array.from(toolkit.textOf(caret.node));
      var chosen = caretSelection();
      if (chosen.start < chosen.end) {
        return "Selected “" + characters.slice(chosen.start, chosen.end).join("") + "” (" + chosen.start + "–" + chosen.end +
          ") in message " + caret.node + ": press a label key.";
      }
      var word = caretMove(characters, caret.focus, "ArrowRight", true);
      var after = characters.slice(caret.focus, word).join("").trim();
      return "Caret in message " + caret.node + " at " + caret.focus + " of " + characters.length +
        (after ? ", before “" + after + "”" : ", at the end") + ".";
    }

    function enterCaret(nodeId, anchor, focus) {
      var row = rowById(nodeId);
      if (!row || !editable || !active) {
        return;
      }
      leaveCaret(false);
      var box = row.querySelector(".node-text");
      caret = { node: nodeId, box: box, anchor: anchor, focus: focus };
      box.tabIndex = -1;
      box.setAttribute("role", "textbox");
      box.setAttribute("aria-readonly", "true");
      box.setAttribute("aria-label", "Text of message " + nodeId + ", caret mode: Shift with the arrows selects, a label key labels, Esc leaves");
      box.classList.add("is-caret");
      box.addEventListener("keydown", caretKey);
      box.addEventListener("focusout", caretBlur);
      paint(nodeId, null);
      box.focus({ preventScroll: true });
      announce(describeCaret());
    }

    // Leaves caret mode; `toRow` puts the focus back on the message's row.
    function leaveCaret(toRow) {
      if (!caret) {
        return;
      }
      var left = caret;
      caret = null;
      left.box.removeEventListener("keydown", caretKey);
      left.box.removeEventListener("focusout", caretBlur);
      ["tabindex", "role", "aria-readonly", "aria-label"].forEach(function (name) {
        left.box.removeAttribute(name);
      });
      left.box.classList.remove("is-caret");
      var choosing = chooser && chooser.pending.node === left.node;
      paint(left.node, choosing ? chooser.pending : null);
      if (!choosing) {
        announce(""); // while the chooser asks for the rest, the line still says what is selected
      }
      if (toRow) {
        focusRow(left.node);
      }
    }

    function caretBlur() {
      leaveCaret(false);
    }

    // Labels the caret's selection with `label`: at once, or through the chooser when attributes are asked for.
    function caretLabel(widget, label) {
      var chosen = caretSelection();
      if (chosen.start === chosen.end) {
        announce("Nothing is selected: hold Shift and move the caret first.");
        return;
      }
      var text = toolkit.textOf(caret.node);
      var from = { anchor: caret.anchor, focus: caret.focus };
      openChooser(widget, caret.node, units(text, chosen.start), units(text, chosen.end), { label: label, fromCaret: from });
    }

    function caretKey(event) {
      if (!caret || event.metaKey || (event.ctrlKey && event.key === "Enter") || event.key === "Tab") {
        return; // Ctrl+Enter still submits; Tab moves on (and leaves caret mode)
      }
      var characters = Array.from(toolkit.textOf(caret.node));
      var key = event.key;
      if (key === "ArrowLeft" || key === "ArrowRight" || key === "Home" || key === "End") {
        var byWord = event.ctrlKey || event.altKey;
        var collapsed = caret.anchor === caret.focus;
        var to;
        if (!event.shiftKey && !collapsed && !byWord && (key === "ArrowLeft" || key === "ArrowRight")) {
          // An arrow without Shift drops the selection at its side, as in a text field.
          to = key === "ArrowLeft" ? Math.min(caret.anchor, caret.focus) : Math.max(caret.anchor, caret.focus);
        } else {
          to = caretMove(characters, caret.focus, key, byWord);
        }
        caret.focus = to;
        if (!event.shiftKey) {
          caret.anchor = to;
        }
        paint(caret.node, null);
        announce(describeCaret());
      } else if (key === "Escape") {
        leaveCaret(true);
      } else if (key === "Enter") {
        caretLabel(active, null);
      } else if (!event.ctrlKey && !event.altKey && keyIndex(active.config.labels, key) >= 0) {
        caretLabel(active, labelName(active.config.labels[keyIndex(active.config.labels, key)]));
      }
      // Every other key stays here too: the page's own keys (j, k, p, c, 1-9) do not act behind caret mode.
      event.preventDefault();
      event.stopPropagation();
    }

    // -- the label palette -------------------------------------------------------

    // A label picked in the palette: for the chooser's label step, the caret's selection, or the mouse's.
    function paletteChoose(widget, label) {
      if (!editable) {
        return;
      }
      active = widget;
      if (chooser) {
        var pending = chooser.pending;
        if (pending.widget === widget && currentStep(pending) === pending.steps[0]) {
          choose(pending, pending.steps[0], label);
          advance();
        } else {
          chooser.element.focus({ preventScroll: true });
        }
        return;
      }
      if (caret) {
        caretLabel(widget, label);
        return;
      }
      var stretch = selectedStretch();
      if (stretch) {
        openChooser(widget, stretch.node, stretch.start, stretch.end, { label: label });
      } else {
        toolkit.flash("Select text in a message first: with the mouse, or press s on a message and Shift with the arrows.");
      }
    }

    function drawPalette(widget) {
      var labels = widget.config.labels;
      var buttons = labels.map(function (label, index) {
        var name = labelName(label);
        var hint = keyHint(labels, index);
        var button = el("button", {
          type: "button",
          class: "button span-palette-label",
          disabled: !editable,
          "data-label": name,
          "aria-keyshortcuts": hint,
        }, [swatch(colourOf(widget, name)), hint ? el("kbd", { text: hint }) : null, " " + name]);
        // The press keeps the selection (and caret mode's focus) that the click then labels.
        button.addEventListener("mousedown", function (event) {
          event.preventDefault();
        });
        button.addEventListener("click", function () {
          paletteChoose(widget, name);
        });
        return button;
      });
      return el("div", {
        class: "span-palette",
        role: "group",
        "aria-label": "Span labels" + (widgets.length > 1 ? " (" + widget.config.name + ")" : ""),
        "data-span-palette": widget.config.name,
      }, [el("span", { class: "span-palette-title", text: widgets.length > 1 ? widget.config.name + ":" : "Labels:" })].concat(buttons));
    }

    // -- wiring ----------------------------------------------------------------------

    function start() {
      if (started) {
        return;
      }
      started = true;
      var rows = toolkit.rows();
      if (rows.length) {
        // On the conversation's section, so that the rows keep it in the focus view too.
        var section = rows[0].closest(".annotate-tree") || rows[0].parentNode;
        section.classList.add("has-spans");
        // The palette above the conversation: in view whenever the messages are.
        palettes = el("div", { class: "span-palettes", "data-span-palettes": true });
        caretStatus = el("p", { class: "span-caret-status", role: "status", "aria-live": "polite", "data-span-caret-status": true });
        var hint = el("p", { class: "muted span-palette-hint", text: editable
          ? "Select text in a message, or press s on a message for a caret: arrows move it (Ctrl or Alt: by word), Shift selects, a label key labels, Esc leaves."
          : "" });
        var list = rows[0].parentNode;
        list.parentNode.insertBefore(el("div", { class: "span-toolbar" }, [palettes, hint, caretStatus]), list);
      }
      document.addEventListener("mouseup", function (event) {
        if (!chooser || !chooser.element.contains(event.target)) {
          setTimeout(selectionEnded, 0);
        }
      });
      document.addEventListener("keyup", function (event) {
        if (event.shiftKey && !chooser && !caret) {
          selectionEnded();
        }
      });
      // s on a message row: caret mode in its text.
      document.addEventListener("keydown", function (event) {
        var target = event.target;
        if (event.key !== "s" || event.ctrlKey || event.metaKey || event.altKey || chooser || !editable ||
            !target.classList || !target.classList.contains("node") || target.dataset.id === undefined) {
          return;
        }
        event.preventDefault();
        enterCaret(target.dataset.id, 0, 0);
      });
      window.addEventListener("resize", placeChooser);
      // Any scroll (the page's, or the conversation's own) moves the text: the chooser follows.
      document.addEventListener("scroll", placeChooser, true);
      var help = document.querySelector("[data-help] tbody");
      if (help && editable) {
        help.appendChild(el("tr", {}, [
          el("th", { scope: "row", text: "Select text in a message" }),
          el("td", { text: "make a span: then its label and attributes with their keys (1–9) or the labels above the conversation, Enter to add, Backspace to go back, Esc to cancel" }),
        ]));
        help.appendChild(el("tr", {}, [
          el("th", { scope: "row" }, [el("kbd", { text: "s" })]),
          el("td", { text: "caret mode in the message's text: ← → by character, Ctrl or Alt with them by word, Home / End, Shift to select, a label key (1–9) makes the span, Enter opens the chooser, Esc leaves" }),
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
      if (palettes) {
        palettes.appendChild(drawPalette(widget));
      }
      var hint = el("p", { class: "muted", text: editable ? "Select text in a message to add a span (or s on a message, for the keys); spans may nest and overlap." : "" });
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
