/* The annotate page (templates/annotation/annotate.html).
 *
 * Starts from the json_script block "annotate-data" (the item as the API
 * gives it, the schemes' normalised configs, the API URLs) and the tree rows
 * the template drew. Answers live in one state object keyed by scheme name
 * and, inside a tree scheme, by node external id — never by the open node or
 * a position — so rating one node cannot touch another's rating, and opening
 * a node only reads state: the path changes through the path commands alone.
 *
 * Every change is saved as a draft after a short pause (PUT .../draft with
 * the version it was based on); a 409 stops saving and offers a reload.
 * Message text is only ever copied with textContent. No inline script, no
 * globals, no dependencies.
 */
(function () {
  "use strict";

  var SAVE_DELAY_MS = 600;
  var RETRY_DELAY_MS = 5000;
  var MAX_TIME_MS = 3600000;
  // The widget types this page draws (see WIDGETS), with a title for node widgets.
  var WIDGET_TITLES = {
    likert: "Rating",
    radio: "Label",
    multiselect: "Labels",
    multirate: "Ratings",
    text: "Note",
    number: "Value",
    slider: "Value",
  };

  var root = document.querySelector("[data-annotate]");
  var dataElement = document.getElementById("annotate-data");
  if (!root || !dataElement) {
    return;
  }
  var data = JSON.parse(dataElement.textContent);
  var editable = Boolean(data.editable);
  var version = data.item.assignment.version;
  var uid = 0;

  function part(name) {
    return root.querySelector("[data-" + name + "]");
  }

  function el(tag, attributes, children) {
    var node = document.createElement(tag);
    Object.keys(attributes || {}).forEach(function (key) {
      var value = attributes[key];
      if (value === false || value === null || value === undefined) {
        return;
      }
      if (key === "text") {
        node.textContent = value;
      } else {
        node.setAttribute(key, value === true ? "" : String(value));
      }
    });
    (children || []).forEach(function (child) {
      if (child !== null && child !== undefined) {
        node.appendChild(typeof child === "string" ? document.createTextNode(child) : child);
      }
    });
    return node;
  }

  function nextId(prefix) {
    uid += 1;
    return prefix + "-" + uid;
  }

  function entries(object) {
    return object && typeof object === "object" && !Array.isArray(object) ? Object.entries(object) : [];
  }

  // -- the tree ---------------------------------------------------------------

  // Rows deeper than this are drawn at this indentation (trees.selectors.MAX_INDENT).
  var MAX_INDENT = 40;
  var treeElement = part("tree");
  var messages = data.item.tree.messages || [];
  var messageById = new Map();
  var childrenById = new Map();
  messages.forEach(function (message) {
    messageById.set(message.id, message);
    childrenById.set(message.id, []);
  });
  var rootIds = [];
  var siblingIndex = new Map();
  messages.forEach(function (message) {
    var siblings = message.parent !== null && childrenById.has(message.parent) ? childrenById.get(message.parent) : rootIds;
    siblingIndex.set(message.id, siblings.length);
    siblings.push(message.id);
  });
  var rows = drawRows();
  var levels = messages.map(function (message) {
    return message.depth + 1;
  });
  var indexById = new Map();
  rows.forEach(function (row, index) {
    indexById.set(row.dataset.id, index);
  });
  var rootId = rows.length ? rows[0].dataset.id : null;

  // One row per message, in the preorder the server sent: a flat WAI-ARIA
  // tree whose aria-level gives the nesting. Text goes in with textContent.
  function drawRows() {
    var fragment = document.createDocumentFragment();
    var drawn = messages.map(function (message, index) {
      var children = childrenById.get(message.id).length;
      var siblings = message.parent === null ? rootIds : childrenById.get(message.parent);
      var row = el("li", {
        id: "node-" + index,
        class: "node role-" + message.role + " indent-" + Math.min(message.depth, MAX_INDENT) + (children >= 2 ? " is-branch" : ""),
        role: "treeitem",
        "aria-level": message.depth + 1,
        "aria-setsize": siblings.length,
        "aria-posinset": siblingIndex.get(message.id) + 1,
        "aria-expanded": children ? "true" : null,
        "aria-selected": "false",
        tabindex: index === 0 ? 0 : -1,
        "data-id": message.id,
        "data-parent": message.parent,
        "data-children": children,
      }, [
        el("div", { class: "node-head" }, [
          el("span", { class: "node-toggle", "aria-hidden": "true", "data-leaf": !children }),
          el("span", { class: "node-role", text: message.role }),
          el("code", { class: "node-id", text: message.id }),
          children >= 2 ? el("span", { class: "node-branch", text: "branch point: " + children + " replies" }) : null,
          el("span", { class: "node-marks", "data-marks": true }),
        ]),
        el("div", { class: "node-text", lang: message.lang, text: message.text }),
      ]);
      fragment.appendChild(row);
      return row;
    });
    if (!drawn.length) {
      fragment.appendChild(el("li", { class: "tree-empty", text: "This tree has no messages." }));
    }
    treeElement.appendChild(fragment);
    return drawn;
  }

  function rowOf(id) {
    return rows[indexById.get(id)];
  }

  function parentOf(id) {
    return messageById.get(id).parent;
  }

  function textOf(id) {
    return messageById.get(id).text;
  }

  function roleOf(id) {
    return messageById.get(id).role;
  }

  function isFolded(index) {
    return rows[index].getAttribute("aria-expanded") === "false";
  }

  function subtreeEnd(index) {
    var end = index + 1;
    while (end < rows.length && levels[end] > levels[index]) {
      end += 1;
    }
    return end;
  }

  function setExpanded(index, expanded) {
    if (!rows[index].hasAttribute("aria-expanded")) {
      return;
    }
    rows[index].setAttribute("aria-expanded", expanded ? "true" : "false");
    var end = subtreeEnd(index);
    var next = index + 1;
    while (next < end) {
      rows[next].hidden = !expanded;
      // A node folded earlier keeps its subtree hidden when an ancestor unfolds.
      next = expanded && isFolded(next) ? subtreeEnd(next) : next + 1;
    }
  }

  var current = 0;

  function focusRow(index) {
    if (index < 0 || index >= rows.length) {
      return;
    }
    rows[current].tabIndex = -1;
    current = index;
    rows[index].tabIndex = 0;
    rows[index].focus();
  }

  function visibleFrom(index, step) {
    var next = index + step;
    while (next >= 0 && next < rows.length && rows[next].hidden) {
      next += step;
    }
    return next >= 0 && next < rows.length ? next : index;
  }

  function currentId() {
    return rows.length ? rows[current].dataset.id : null;
  }

  // -- state ------------------------------------------------------------------

  var schemes = data.schemes || [];
  var treeSchemes = schemes.filter(function (scheme) {
    return scheme.annotation_type === "tree_annotation";
  });
  // Item-level types this page draws, and those whose widget file registered them (see TOOLKIT).
  var itemSchemes = schemes.filter(function (scheme) {
    return Object.prototype.hasOwnProperty.call(WIDGET_TITLES, scheme.annotation_type) ||
      Object.prototype.hasOwnProperty.call(window.BranchpointWidgets || {}, scheme.annotation_type);
  });
  var pathSchemes = treeSchemes.filter(function (scheme) {
    return scheme.path_selection && scheme.path_selection.enabled;
  });
  var compareSchemes = treeSchemes.filter(function (scheme) {
    return scheme.branch_comparison && scheme.branch_comparison.enabled;
  });
  var saved = data.item.annotations || {};
  var answers = new Map();

  treeSchemes.forEach(function (scheme) {
    var payload = saved[scheme.name] || {};
    var state = {
      nodes: new Map(entries(payload.node_annotations)),
      path: Array.isArray(payload.selected_path) ? payload.selected_path.slice() : [],
      comparisons: new Map(entries(payload.branch_comparisons)),
    };
    if (scheme.branch_comparison && scheme.branch_comparison.enabled) {
      var answerKey = scheme.branch_comparison.mode === "ranking" ? "ranking" : "pairs";
      childrenById.forEach(function (children, parent) {
        // The server stored a shuffled order when it handed the item out; tree
        // order is only a fallback for a comparison added to the config since.
        if (children.length >= 2 && !state.comparisons.has(parent)) {
          var fresh = { shown_order: children.slice() };
          fresh[answerKey] = [];
          state.comparisons.set(parent, fresh);
        }
      });
    }
    answers.set(scheme.name, state);
  });
  itemSchemes.forEach(function (scheme) {
    if (saved[scheme.name] !== undefined) {
      answers.set(scheme.name, saved[scheme.name]);
    }
  });

  function collect() {
    var result = {};
    treeSchemes.forEach(function (scheme) {
      var state = answers.get(scheme.name);
      var payload = {};
      if (scheme.rates_nodes) {
        payload.node_annotations = Object.fromEntries(state.nodes);
      }
      if (scheme.path_selection && scheme.path_selection.enabled) {
        payload.selected_path = state.path.slice();
      }
      if (scheme.branch_comparison && scheme.branch_comparison.enabled) {
        payload.branch_comparisons = Object.fromEntries(state.comparisons);
      }
      result[scheme.name] = payload;
    });
    itemSchemes.forEach(function (scheme) {
      if (answers.has(scheme.name)) {
        result[scheme.name] = answers.get(scheme.name);
      }
    });
    return result;
  }

  // -- widgets ----------------------------------------------------------------
  // One builder per annotation type, like the server's registry. Each takes
  // the scheme's config, the current payload and a callback for a new payload
  // (null when cleared), and returns {element, key(n)}: key(n) applies the
  // digit key n and says whether it did anything.

  function labelName(label) {
    return typeof label === "string" ? label : label.name;
  }

  function labelIndexForKey(labels, digit) {
    for (var index = 0; index < labels.length; index += 1) {
      if (typeof labels[index] === "object" && labels[index].key_value === String(digit)) {
        return index;
      }
    }
    return digit <= labels.length ? digit - 1 : -1;
  }

  function fieldset(className, legend, children) {
    return el("fieldset", { class: "widget " + className, "data-widget": true }, [
      el("legend", { text: legend }),
    ].concat(children));
  }

  function choiceInput(type, name, value, checked, text, digit) {
    var input = el("input", { type: type, name: name, value: value, disabled: !editable });
    input.checked = checked;
    var label = el("label", { class: "choice" }, [
      input,
      digit ? el("kbd", { class: "choice-key", text: String(digit) }) : null,
      el("span", { text: text }),
    ]);
    return { input: input, label: label };
  }

  var WIDGETS = {
    likert: function (config, legend, value, onChange) {
      var name = nextId("likert");
      var inputs = [];
      var points = el("div", { class: "choices likert-points" });
      for (var point = 1; point <= config.size; point += 1) {
        var caption = config.labels ? config.labels[point - 1] : String(point);
        var choice = choiceInput("radio", name, point, Boolean(value && value.rating === point), caption);
        choice.input.addEventListener("change", onChange.bind(null, { rating: point }));
        inputs.push(choice.input);
        points.appendChild(choice.label);
      }
      var ends = el("div", { class: "likert-ends", "aria-hidden": "true" }, [
        el("span", { text: config.min_label ? "1 = " + config.min_label : "" }),
        el("span", { text: config.max_label ? config.size + " = " + config.max_label : "" }),
      ]);
      return {
        element: fieldset("widget-likert", legend, [points, ends]),
        key: function (digit) {
          if (digit > config.size || !editable) {
            return false;
          }
          inputs[digit - 1].checked = true;
          onChange({ rating: digit });
          return true;
        },
      };
    },

    radio: function (config, legend, value, onChange) {
      var name = nextId("radio");
      var inputs = [];
      var group = el("div", { class: "choices" });
      config.labels.forEach(function (label, index) {
        var text = labelName(label);
        var choice = choiceInput("radio", name, text, Boolean(value && value.label === text), text, index < 9 ? index + 1 : null);
        choice.input.addEventListener("change", onChange.bind(null, { label: text }));
        inputs.push(choice.input);
        group.appendChild(choice.label);
      });
      return {
        element: fieldset("widget-radio", legend, [group]),
        key: function (digit) {
          var index = labelIndexForKey(config.labels, digit);
          if (index < 0 || !editable) {
            return false;
          }
          inputs[index].checked = true;
          onChange({ label: labelName(config.labels[index]) });
          return true;
        },
      };
    },

    multiselect: function (config, legend, value, onChange) {
      var name = nextId("multiselect");
      var inputs = [];
      var group = el("div", { class: "choices" });
      var chosen = new Set(value && Array.isArray(value.labels) ? value.labels : []);
      function changed() {
        onChange({
          labels: config.labels.map(labelName).filter(function (text, index) {
            return inputs[index].checked;
          }),
        });
      }
      config.labels.forEach(function (label, index) {
        var text = labelName(label);
        var choice = choiceInput("checkbox", name, text, chosen.has(text), text, index < 9 ? index + 1 : null);
        choice.input.addEventListener("change", changed);
        inputs.push(choice.input);
        group.appendChild(choice.label);
      });
      return {
        element: fieldset("widget-multiselect", legend, [group]),
        key: function (digit) {
          var index = labelIndexForKey(config.labels, digit);
          if (index < 0 || !editable) {
            return false;
          }
          inputs[index].checked = !inputs[index].checked;
          changed();
          return true;
        },
      };
    },

    multirate: function (config, legend, value, onChange) {
      var labels = config.labels.map(labelName);
      var options = config.options.map(labelName);
      var state = new Map(entries(value));
      var groups = [];
      var table = el("table", { class: "multirate" }, [
        el("thead", {}, [
          el("tr", {}, [el("td")].concat(labels.map(function (text, index) {
            return el("th", { scope: "col", text: (index < 9 ? index + 1 + ": " : "") + text });
          }))),
        ]),
      ]);
      var body = el("tbody");
      options.forEach(function (option) {
        var name = nextId("multirate");
        var inputs = [];
        var row = el("tr", { "data-option": option }, [el("th", { scope: "row", text: option })]);
        labels.forEach(function (text) {
          var input = el("input", { type: "radio", name: name, value: text, disabled: !editable, "aria-label": option + ": " + text });
          input.checked = state.get(option) === text;
          input.addEventListener("change", function () {
            state.set(option, text);
            onChange(Object.fromEntries(state));
          });
          inputs.push(input);
          row.appendChild(el("td", {}, [input]));
        });
        groups.push({ option: option, row: row, inputs: inputs });
        body.appendChild(row);
      });
      table.appendChild(body);
      return {
        element: fieldset("widget-multirate", legend, [table]),
        key: function (digit) {
          if (digit > labels.length || !editable) {
            return false;
          }
          // The option row holding the focus, else the first one not rated yet.
          var active = document.activeElement;
          var group = groups.find(function (candidate) {
            return candidate.row.contains(active);
          }) || groups.find(function (candidate) {
            return !state.has(candidate.option);
          }) || groups[0];
          group.inputs[digit - 1].checked = true;
          state.set(group.option, labels[digit - 1]);
          onChange(Object.fromEntries(state));
          return true;
        },
      };
    },

    text: function (config, legend, value, onChange) {
      var id = nextId("text");
      var input = config.multiline
        ? el("textarea", { id: id, rows: config.rows, cols: config.cols, maxlength: config.max_length, disabled: !editable })
        : el("input", { id: id, type: "text", maxlength: config.max_length, disabled: !editable });
      input.value = value && typeof value.text === "string" ? value.text : "";
      input.addEventListener("input", function () {
        onChange({ text: input.value });
      });
      return {
        element: fieldset("widget-text", legend, [el("label", { for: id, class: "visually-hidden", text: legend }), input]),
        key: function () {
          return false;
        },
      };
    },

    number: function (config, legend, value, onChange) {
      return numberWidget("number", config, legend, value, onChange);
    },

    slider: function (config, legend, value, onChange) {
      return numberWidget("range", config, legend, value, onChange);
    },
  };

  // Widgets of other types come from their own files (a scheme's
  // widget_script), loaded before this one. Each registers
  //   window.BranchpointWidgets[type] = {title: "...", build: function (toolkit) {
  //     return function (config, legend, value, onChange) { ... return {element, key}; };
  //   }}
  // and builds its elements with the toolkit, so it behaves like the others.
  var TOOLKIT = {
    el: el,
    fieldset: fieldset,
    choiceInput: choiceInput,
    labelName: labelName,
    labelIndexForKey: labelIndexForKey,
    nextId: nextId,
    editable: editable,
    data: data,
    rows: function () {
      return rows;
    },
    textOf: textOf,
    roleOf: roleOf,
    currentId: currentId,
    flash: function (message) {
      flash(message);
    },
  };
  var registered = window.BranchpointWidgets || {};
  Object.keys(registered).forEach(function (type) {
    WIDGETS[type] = registered[type].build(TOOLKIT);
    WIDGET_TITLES[type] = registered[type].title || "Answer";
  });

  function numberWidget(type, config, legend, value, onChange) {
    var id = nextId(type);
    var input = el("input", {
      id: id,
      type: type,
      min: config.min,
      max: config.max,
      step: config.step === null || config.step === undefined ? "any" : config.step,
      disabled: !editable,
    });
    var shown = el("output", { for: id, class: "number-value" });
    var has = value && typeof value.value === "number";
    if (has) {
      input.value = value.value;
    } else if (type === "range" && config.starting_value !== null && config.starting_value !== undefined) {
      input.value = config.starting_value;
    }
    shown.textContent = has ? String(value.value) : type === "range" ? "not set" : "";
    input.addEventListener("input", function () {
      var number = input.value === "" ? NaN : Number(input.value);
      shown.textContent = type === "range" ? (isNaN(number) ? "not set" : String(number)) : "";
      onChange(isNaN(number) ? null : { value: number });
    });
    var parts = [el("label", { for: id, class: "visually-hidden", text: legend })];
    if (config.min_label) {
      parts.push(el("span", { class: "slider-end", text: config.min_label }));
    }
    parts.push(input);
    if (config.max_label) {
      parts.push(el("span", { class: "slider-end", text: config.max_label }));
    }
    parts.push(shown);
    return {
      element: fieldset("widget-" + type, legend, parts),
      key: function () {
        return false;
      },
    };
  }

  // A choice among labels for one pair of compared replies.
  function pairWidget(legend, labels, value, onChange) {
    var name = nextId("pair");
    var inputs = [];
    var group = el("div", { class: "choices" });
    labels.forEach(function (text, index) {
      var choice = choiceInput("radio", name, text, value === text, text, index < 9 ? index + 1 : null);
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
        if (digit > labels.length || !editable) {
          return false;
        }
        inputs[digit - 1].checked = true;
        onChange(labels[digit - 1]);
        return true;
      },
    };
  }

  var widgetByElement = new Map();

  function track(widget) {
    widgetByElement.set(widget.element, widget);
    return widget;
  }

  // -- row marks: what each node has, at a glance ------------------------------

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

  function markRow(id) {
    var row = rowOf(id);
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
  }

  // -- the node panel ---------------------------------------------------------

  var panel = part("panel");
  var openId = null;
  var panelWidgets = [];

  function openNode(id) {
    if (openId !== null && indexById.has(openId)) {
      rowOf(openId).classList.remove("is-open");
      rowOf(openId).setAttribute("aria-selected", "false");
    }
    openId = id;
    var row = rowOf(id);
    row.classList.add("is-open");
    row.setAttribute("aria-selected", "true");
    panel.hidden = false;
    panel.dataset.node = id;
    part("panel-heading").textContent = "Message " + id;
    part("panel-role").textContent = roleOf(id);
    part("panel-id").textContent = id;
    part("panel-text").textContent = textOf(id);
    var parent = parentOf(id);
    part("panel-context").hidden = parent === null;
    part("panel-parent-id").textContent = parent === null ? "" : parent;
    part("panel-parent-text").textContent = parent === null ? "" : textOf(parent);

    panelWidgets = [];
    var widgetsBox = part("panel-widgets");
    widgetsBox.textContent = "";
    treeSchemes.forEach(function (scheme) {
      if (!scheme.rates_nodes) {
        return;
      }
      var state = answers.get(scheme.name);
      var title = scheme.node_scheme.description || WIDGET_TITLES[scheme.node_scheme.annotation_type] || "Answer";
      var legend = treeSchemes.length > 1 ? title + " (" + scheme.name + ")" : title;
      var build = WIDGETS[scheme.node_scheme.annotation_type];
      // The callback is bound to this node's id: a widget can only ever write its own node's answer.
      var widget = track(build(scheme.node_scheme, legend, state.nodes.get(id), function (payload) {
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
    renderComparisons(id);
  }

  function closePanel() {
    if (openId === null) {
      return;
    }
    rowOf(openId).classList.remove("is-open");
    rowOf(openId).setAttribute("aria-selected", "false");
    openId = null;
    panelWidgets = [];
    panel.hidden = true;
    focusRow(current);
  }

  // -- branch comparison ------------------------------------------------------

  var LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";

  function letter(index) {
    return index < LETTERS.length ? LETTERS[index] : "#" + (index + 1);
  }

  function renderComparisons(parent) {
    var box = part("panel-comparisons");
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
          " ",
          el("code", { text: child }),
          el("div", { class: "reply-text", text: textOf(child) }),
        ]));
      });
      section.appendChild(replies);
      if (config.mode === "ranking") {
        section.appendChild(rankingControls(scheme, parent, comparison));
      } else {
        for (var first = 0; first < order.length; first += 1) {
          for (var second = first + 1; second < order.length; second += 1) {
            section.appendChild(pairControl(scheme, comparison, order, first, second));
          }
        }
      }
      box.appendChild(section);
    });
  }

  function pairControl(scheme, comparison, order, first, second) {
    var a = order[first];
    var b = order[second];
    var existing = comparison.pairs.find(function (pair) {
      return (pair.a === a && pair.b === b) || (pair.a === b && pair.b === a);
    });
    var legend = letter(first) + " (" + a + ") compared with " + letter(second) + " (" + b + ")";
    var widget = track(pairWidget(legend, scheme.branch_comparison.labels, existing && existing.a === a ? existing.label : null, function (label) {
      comparison.pairs = comparison.pairs.filter(function (pair) {
        return !((pair.a === a && pair.b === b) || (pair.a === b && pair.b === a));
      });
      comparison.pairs.push({ a: a, b: b, label: label });
      changed();
    }));
    widget.element.dataset.pair = a + " " + b;
    panelWidgets.push(widget);
    return widget.element;
  }

  function rankingControls(scheme, parent, comparison) {
    var ranking = comparison.ranking && comparison.ranking.length ? comparison.ranking.slice() : comparison.shown_order.slice();
    var list = el("ol", { class: "ranking", "aria-label": "Best first" });
    var status = el("p", { class: "ranking-status", text: comparison.ranking && comparison.ranking.length ? "Your ranking is saved." : "Not ranked yet: order the replies, best first, or keep this order." });

    function commit(focusIndex, focusClass) {
      comparison.ranking = ranking.slice();
      changed();
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
        var up = el("button", { type: "button", class: "button rank-up", disabled: index === 0 || !editable, "aria-label": "Move " + child + " up" , text: "Up" });
        var down = el("button", { type: "button", class: "button rank-down", disabled: index === ranking.length - 1 || !editable, "aria-label": "Move " + child + " down", text: "Down" });
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
          el("strong", { class: "reply-letter", text: letter(shownAt) }), " ", el("code", { text: child }), " ", up, " ", down,
        ]));
      });
    }

    draw();
    var keep = el("button", { type: "button", class: "button", disabled: !editable, text: "Keep this order" });
    keep.addEventListener("click", function () {
      commit(0, ".rank-down");
    });
    return el("div", { class: "ranking-box" }, [list, keep, status]);
  }

  // -- the path ---------------------------------------------------------------

  var flashElement = part("flash");
  var flashTimer = null;

  function flash(message) {
    flashElement.textContent = message;
    clearTimeout(flashTimer);
    flashTimer = setTimeout(function () {
      flashElement.textContent = "";
    }, 6000);
  }

  var pathLists = new Map();

  function pathAdd(scheme, id) {
    var path = answers.get(scheme.name).path;
    var last = path.length ? path[path.length - 1] : null;
    if (!editable) {
      flash("This item can no longer be changed.");
    } else if (path.indexOf(id) >= 0) {
      flash("“" + id + "” is already on the path.");
    } else if (last === null && id !== rootId) {
      flash("A path starts at the first message, “" + rootId + "”: add it first.");
    } else if (last !== null && parentOf(id) !== last) {
      flash("“" + id + "” is not a reply to “" + last + "”, the path's last message; add one of its replies, or clear the path (c).");
    } else {
      path.push(id);
      pathChanged(scheme, [id]);
      flash("Added “" + id + "” to the path (step " + path.length + ").");
    }
  }

  function pathRemoveLast(scheme) {
    var path = answers.get(scheme.name).path;
    if (!editable || !path.length) {
      return;
    }
    var removed = path.pop();
    pathChanged(scheme, [removed]);
    flash("Took “" + removed + "” off the path.");
  }

  function pathClear(scheme) {
    var path = answers.get(scheme.name).path;
    if (!editable || !path.length) {
      return;
    }
    var removed = path.splice(0, path.length);
    pathChanged(scheme, removed);
    flash("Cleared the path.");
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
      list.appendChild(el("li", { "data-step": id }, [el("code", { text: id }), " ", el("span", { class: "muted", text: roleOf(id) })]));
    });
  }

  function buildPathBars() {
    var box = part("path-bars");
    pathSchemes.forEach(function (scheme, index) {
      var list = el("ol", { class: "path-list", "data-path": scheme.name, "aria-live": "polite" });
      pathLists.set(scheme.name, list);
      var keys = index === 0;
      var add = el("button", { type: "button", class: "button", disabled: !editable }, ["Add focused message", keys ? el("kbd", { text: "p" }) : null]);
      var back = el("button", { type: "button", class: "button", disabled: !editable }, ["Remove last", keys ? el("kbd", { text: "Backspace" }) : null]);
      var clear = el("button", { type: "button", class: "button", disabled: !editable }, ["Clear path", keys ? el("kbd", { text: "c" }) : null]);
      add.addEventListener("click", function () {
        pathAdd(scheme, currentId());
      });
      back.addEventListener("click", pathRemoveLast.bind(null, scheme));
      clear.addEventListener("click", pathClear.bind(null, scheme));
      var title = pathSchemes.length > 1 ? "Path (" + scheme.name + ")" : "Path";
      box.appendChild(el("section", { class: "path-bar", "aria-label": title }, [
        el("h3", { text: title }),
        scheme.path_selection.description ? el("p", { class: "muted", text: scheme.path_selection.description }) : null,
        list,
        el("div", { class: "path-tools" }, [add, " ", back, " ", clear]),
      ]));
      drawPath(scheme);
    });
  }

  // -- item-level schemes ---------------------------------------------------------

  function buildItemSchemes() {
    var box = part("item-schemes");
    if (!itemSchemes.length) {
      return;
    }
    box.hidden = false;
    box.appendChild(el("h2", { text: "About the whole conversation" }));
    itemSchemes.forEach(function (scheme) {
      var legend = (scheme.description || scheme.name) + (scheme.label_requirement && scheme.label_requirement.required ? " (required)" : "");
      var widget = track(WIDGETS[scheme.annotation_type](scheme, legend, answers.get(scheme.name), function (payload) {
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

  // -- saving -----------------------------------------------------------------

  var statusElement = part("save-status");
  var conflictBox = part("conflict");
  var errorBox = part("errors");
  var nextForm = part("next-form");
  var csrfToken = nextForm.querySelector("[name=csrfmiddlewaretoken]").value;
  var saveTimer = null;
  var inFlight = null;
  var dirty = false;
  var stopped = false;
  var leaving = false;
  var visibleSince = document.hidden ? null : Date.now();
  var bankedMs = 0;

  document.addEventListener("visibilitychange", function () {
    if (document.hidden && visibleSince !== null) {
      bankedMs += Date.now() - visibleSince;
      visibleSince = null;
    } else if (!document.hidden && visibleSince === null) {
      visibleSince = Date.now();
    }
  });

  function takeTime() {
    var spent = bankedMs + (visibleSince === null ? 0 : Date.now() - visibleSince);
    bankedMs = 0;
    if (visibleSince !== null) {
      visibleSince = Date.now();
    }
    return Math.min(Math.round(spent), MAX_TIME_MS);
  }

  function setStatus(text) {
    statusElement.textContent = text;
  }

  function changed() {
    if (!editable || stopped) {
      return;
    }
    dirty = true;
    setStatus("Unsaved changes…");
    clearTimeout(saveTimer);
    saveTimer = setTimeout(save, SAVE_DELAY_MS);
  }

  function send(method, url, body) {
    return fetch(url, {
      method: method,
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", Accept: "application/json", "X-CSRFToken": csrfToken },
      body: JSON.stringify(body),
    }).then(function (response) {
      return response.json().catch(function () {
        return {};
      }).then(function (json) {
        return { ok: response.ok, status: response.status, body: json };
      });
    }, function () {
      return { ok: false, status: 0, body: {} };
    });
  }

  function writeBody() {
    return { annotations: collect(), version: version, time_spent_ms: takeTime() };
  }

  function save() {
    clearTimeout(saveTimer);
    saveTimer = null;
    if (inFlight) {
      return inFlight.then(save);
    }
    if (stopped || !dirty) {
      return Promise.resolve(!stopped);
    }
    dirty = false;
    setStatus("Saving…");
    var body = writeBody();
    inFlight = send("PUT", data.urls.draft, body).then(function (result) {
      inFlight = null;
      if (result.ok) {
        version = result.body.version;
        errorBox.hidden = true;
        setStatus(dirty ? "Unsaved changes…" : "All changes saved");
        return true;
      }
      bankedMs += body.time_spent_ms;
      dirty = true;
      failed(result, "Not saved");
      if (result.status === 0) {
        saveTimer = setTimeout(save, RETRY_DELAY_MS);
      }
      return false;
    });
    return inFlight;
  }

  function failed(result, what) {
    var body = result.body || {};
    if (result.status === 0) {
      setStatus(what + ": the server could not be reached; trying again shortly.");
      return;
    }
    setStatus(what + ".");
    if (result.status === 409 || result.status === 403 || result.status === 404) {
      stopped = true;
      conflictBox.hidden = false;
      var stale = body.code === "stale_version";
      part("conflict-message").textContent = stale
        ? "This item was changed in another tab or window (it is now at version " + body.current_version + "). Reload to see the latest answers; changes made here since the last save will be lost."
        : (body.message || "This item can no longer be saved.") + ".";
      // A newer version is worth reloading; an item lost or closed is not.
      part("reload").hidden = !stale;
      part("next-item").hidden = stale;
      part(stale ? "reload" : "next-item").focus();
      return;
    }
    var list = part("error-list");
    list.textContent = "";
    (body.errors && body.errors.length ? body.errors : [{ path: "", message: body.message || "the server refused the answers (" + result.status + ")" }]).forEach(function (error) {
      list.appendChild(el("li", {}, [error.path ? el("code", { text: error.path }) : null, error.path ? ": " : "", error.message]));
    });
    errorBox.hidden = false;
  }

  function finish(url, body, label) {
    if (!editable || stopped || leaving) {
      return;
    }
    leaving = true;
    clearTimeout(saveTimer);
    Promise.resolve(inFlight).then(function () {
      if (stopped) {
        leaving = false;
        return;
      }
      setStatus(label + "…");
      return send("POST", url, body()).then(function (result) {
        if (result.ok) {
          dirty = false;
          version = result.body.version;
          if (result.body.feedback) {
            showFeedback(result.body.feedback);
            return;
          }
          setStatus(label + ": done. Loading the next item…");
          nextForm.submit();
        } else {
          leaving = false;
          failed(result, label + " failed");
        }
      });
    });
  }

  function submit() {
    finish(data.urls.submit, writeBody, "Submitting");
  }

  // -- training feedback ----------------------------------------------------------
  // A submitted training item answers with its expected answers beside the
  // annotator's (annotation.training): shown here until they go on. Gold
  // checks in the real work never answer with any.

  function percent(score) {
    return score === null || score === undefined ? "not scored" : Math.round(score * 100) + "%";
  }

  function trainingNews(training) {
    if (training.state === "passed") {
      return "You passed the training (" + percent(training.score) + "). The real work comes next.";
    }
    if (training.state === "failed") {
      return "You did not pass the training (" + percent(training.score) + " of the " + percent(training.pass_accuracy) + " needed). The project's managers can tell you more.";
    }
    if (training.answered === 0 && training.attempt > 1) {
      return "That round scored below the " + percent(training.pass_accuracy) + " needed: attempt " + training.attempt + (training.attempts ? " of " + training.attempts : "") + " comes next, with new items.";
    }
    return "Training: " + training.answered + " of " + training.items + " answered; " + percent(training.pass_accuracy) + " passes.";
  }

  function showFeedback(feedback) {
    editable = false;
    stopped = true;
    leaving = true;
    [part("submit"), part("skip")].forEach(function (button) {
      if (button) {
        button.hidden = true;
      }
    });
    // The answers shown beside the expected ones stay as they were sent.
    root.querySelectorAll("[data-widget] input, [data-widget] textarea, [data-widget] select, [data-widget] button").forEach(function (control) {
      control.disabled = true;
    });
    var rows = part("feedback-rows");
    rows.textContent = "";
    feedback.schemes.forEach(function (entry) {
      var verdict = entry.score === null ? "" : entry.score >= 1 ? "feedback-right" : "feedback-wrong";
      rows.appendChild(el("tr", { "data-feedback-scheme": entry.scheme, class: verdict }, [
        el("th", { scope: "row", text: entry.description || entry.scheme }),
        el("td", { "data-expected": true, text: entry.expected_text }),
        el("td", { "data-given": true, text: entry.given_text }),
        el("td", { "data-score": true, text: percent(entry.score) }),
      ]));
    });
    part("feedback-heading").textContent = feedback.score === null ? "The expected answers" : "Your score: " + percent(feedback.score);
    part("feedback-explanation").hidden = !feedback.explanation;
    part("feedback-explanation-text").textContent = feedback.explanation || "";
    part("feedback-status").textContent = trainingNews(feedback.training);
    setStatus("Submitted.");
    var box = part("feedback");
    box.hidden = false;
    part("feedback-next").focus();
  }

  part("feedback-next").addEventListener("click", function () {
    leaving = true;
    nextForm.submit();
  });

  function skip() {
    if (!editable || stopped) {
      return;
    }
    if (window.confirm("Skip this item? It goes to someone else and you will not see it again.")) {
      finish(data.urls.skip, function () {
        return { version: version };
      }, "Skipping");
    }
  }

  window.addEventListener("beforeunload", function (event) {
    if (editable && !stopped && !leaving && (dirty || inFlight)) {
      event.preventDefault();
      event.returnValue = "";
    }
  });

  // -- keys and clicks ----------------------------------------------------------

  var help = part("help");

  function openHelp() {
    if (!help.open) {
      help.showModal();
    }
  }

  help.addEventListener("close", function () {
    focusRow(current);
  });

  function isTextEntry(target) {
    if (!target || !target.tagName) {
      return false;
    }
    if (target.isContentEditable || target.tagName === "TEXTAREA" || target.tagName === "SELECT") {
      return true;
    }
    return target.tagName === "INPUT" && ["radio", "checkbox", "button", "submit"].indexOf(target.type) < 0;
  }

  function activeWidget() {
    // The widget holding the focus, else the open message's own widget, else
    // its first comparison not answered yet.
    var holder = document.activeElement && document.activeElement.closest ? document.activeElement.closest("[data-widget]") : null;
    if (holder && widgetByElement.has(holder)) {
      return widgetByElement.get(holder);
    }
    if (openId === null || !panelWidgets.length) {
      return null;
    }
    var first = panelWidgets[0];
    if (!first.answered) {
      return first;
    }
    return panelWidgets.find(function (widget) {
      return widget.answered && !widget.answered();
    }) || first;
  }

  document.addEventListener("keydown", function (event) {
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
      event.preventDefault();
      submit();
      return;
    }
    if (help.open || event.altKey || event.ctrlKey || event.metaKey || isTextEntry(event.target)) {
      return;
    }
    var target = event.target;
    var onRow = target.getAttribute && target.getAttribute("role") === "treeitem";
    var onPage = onRow || target === document.body || target === document.documentElement;
    var pathScheme = pathSchemes[0];
    switch (event.key) {
      case "?":
        openHelp();
        break;
      case "j":
        focusRow(visibleFrom(current, 1));
        break;
      case "k":
        focusRow(visibleFrom(current, -1));
        break;
      case "ArrowDown":
      case "ArrowUp":
        if (!onPage) {
          return;
        }
        focusRow(visibleFrom(current, event.key === "ArrowDown" ? 1 : -1));
        break;
      case "ArrowRight":
        if (!onPage) {
          return;
        }
        if (isFolded(current)) {
          setExpanded(current, true);
        } else if (rows[current].hasAttribute("aria-expanded")) {
          focusRow(current + 1);
        }
        break;
      case "ArrowLeft":
        if (!onPage) {
          return;
        }
        if (rows[current].hasAttribute("aria-expanded") && !isFolded(current)) {
          setExpanded(current, false);
        } else if (parentOf(currentId()) !== null) {
          focusRow(indexById.get(parentOf(currentId())));
        }
        break;
      case "Home":
      case "End":
        if (!onPage) {
          return;
        }
        focusRow(event.key === "Home" ? 0 : visibleFrom(rows.length, -1));
        break;
      case "Enter":
        if (!onPage || !rows.length) {
          return;
        }
        openNode(currentId());
        break;
      case "Escape":
        if (openId === null) {
          return;
        }
        closePanel();
        break;
      case "p":
        if (!pathScheme || !rows.length) {
          return;
        }
        pathAdd(pathScheme, currentId());
        break;
      case "Backspace":
        if (!pathScheme || !onPage) {
          return;
        }
        pathRemoveLast(pathScheme);
        break;
      case "c":
        if (!pathScheme) {
          return;
        }
        pathClear(pathScheme);
        break;
      default:
        if (!/^[1-9]$/.test(event.key)) {
          return;
        }
        var widget = activeWidget();
        if (!widget) {
          flash("Open a message first (Enter), or move to a question with Tab.");
        } else if (!editable) {
          flash("This item can no longer be changed.");
        } else if (!widget.key(parseInt(event.key, 10))) {
          return;
        }
    }
    event.preventDefault();
  });

  treeElement.addEventListener("click", function (event) {
    var row = event.target.closest('[role="treeitem"]');
    if (!row) {
      return;
    }
    var index = indexById.get(row.dataset.id);
    if (event.target.closest(".node-toggle")) {
      setExpanded(index, isFolded(index));
      focusRow(index);
      return;
    }
    // A click that ends selecting text (to make a span, say) is not a request to open the message.
    var selection = window.getSelection ? window.getSelection() : null;
    if (selection && !selection.isCollapsed && row.contains(selection.anchorNode)) {
      return;
    }
    focusRow(index);
    openNode(row.dataset.id);
  });

  part("panel-close").addEventListener("click", closePanel);
  part("help-open").addEventListener("click", openHelp);
  part("reload").addEventListener("click", function () {
    leaving = true;
    window.location.reload();
  });
  part("next-item").addEventListener("click", function () {
    leaving = true;
    nextForm.submit();
  });
  var submitButton = part("submit");
  if (submitButton) {
    submitButton.addEventListener("click", submit);
  }
  var skipButton = part("skip");
  if (skipButton) {
    skipButton.addEventListener("click", skip);
  }

  // -- start --------------------------------------------------------------------

  buildPathBars();
  buildItemSchemes();
  rows.forEach(function (row) {
    markRow(row.dataset.id);
  });
  root.dataset.ready = "true";
  if (data.feedback) {
    showFeedback(data.feedback);
  } else if (rows.length) {
    rows[0].focus({ preventScroll: true });
  }
})();
