/* The answer widgets of the annotate page: one builder per annotation type,
 * like the server's registry (annotation/schemes/).
 *
 * A builder takes the scheme's config, a legend, the current payload and a
 * callback onChange(payload, cleared) for a new payload (null when taken
 * back; `cleared` when the annotator cleared it on purpose, which the page
 * lets them undo), and returns {element, key(n), clear()}: key(n) applies
 * the digit key n and says whether it did anything; clear(), where a
 * widget has it (a rating, a label: the key 0 and a Clear button), clears
 * the answer and says whether there was one. The page's own types are here; a scheme type whose widget comes
 * from its own file is added by widget_toolkit.js. Widgets the keys can
 * reach are tracked by their element (track, tracked).
 */

import { entries } from "./answers.js";
import { el, nextId } from "./elements.js";

export function labelName(label) {
  return typeof label === "string" ? label : label.name;
}

export function labelIndexForKey(labels, digit) {
  for (var index = 0; index < labels.length; index += 1) {
    if (typeof labels[index] === "object" && labels[index].key_value === String(digit)) {
      return index;
    }
  }
  return digit <= labels.length ? digit - 1 : -1;
}

export function fieldset(className, legend, children) {
  return el("fieldset", { class: "widget " + className, "data-widget": true }, [
    el("legend", { text: legend }),
  ].concat(children));
}

// The widget builders, for an item whose `item.editable` says (at the time
// they are built, and at each key) whether its answers can still change.
export function createWidgets(item) {
  // The widget types this page draws, with a title for node widgets.
  var WIDGET_TITLES = {
    likert: "Rating",
    radio: "Label",
    multiselect: "Labels",
    multirate: "Ratings",
    text: "Note",
    number: "Value",
    slider: "Value",
  };
  var widgetByElement = new Map();

  // clear() for a widget of radio `inputs`: unchecks them and reports the answer cleared.
  function clearer(inputs, onChange) {
    return function () {
      if (!item.editable || !inputs.some(function (input) {
        return input.checked;
      })) {
        return false;
      }
      inputs.forEach(function (input) {
        input.checked = false;
      });
      onChange(null, true);
      return true;
    };
  }

  function clearButton(clear) {
    var button = el("button", { type: "button", class: "button widget-clear", disabled: !item.editable, "aria-keyshortcuts": "0" }, ["Clear ", el("kbd", { text: "0" })]);
    button.addEventListener("click", clear);
    return button;
  }

  function choiceInput(type, name, value, checked, text, digit) {
    var input = el("input", { type: type, name: name, value: value, disabled: !item.editable });
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
      var clear = clearer(inputs, onChange);
      return {
        element: fieldset("widget-likert", legend, [points, ends, clearButton(clear)]),
        clear: clear,
        key: function (digit) {
          if (digit > config.size || !item.editable) {
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
      var clear = clearer(inputs, onChange);
      return {
        element: fieldset("widget-radio", legend, [group, clearButton(clear)]),
        clear: clear,
        key: function (digit) {
          var index = labelIndexForKey(config.labels, digit);
          if (index < 0 || !item.editable) {
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
          if (index < 0 || !item.editable) {
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
          var input = el("input", { type: "radio", name: name, value: text, disabled: !item.editable, "aria-label": option + ": " + text });
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
          if (digit > labels.length || !item.editable) {
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
        ? el("textarea", { id: id, rows: config.rows, cols: config.cols, maxlength: config.max_length, disabled: !item.editable })
        : el("input", { id: id, type: "text", maxlength: config.max_length, disabled: !item.editable });
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

  function numberWidget(type, config, legend, value, onChange) {
    var id = nextId(type);
    var input = el("input", {
      id: id,
      type: type,
      min: config.min,
      max: config.max,
      step: config.step === null || config.step === undefined ? "any" : config.step,
      disabled: !item.editable,
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

  return {
    choiceInput: choiceInput,
    // Whether the page has a widget for this annotation type.
    draws: function (type) {
      return Object.prototype.hasOwnProperty.call(WIDGET_TITLES, type);
    },
    titleOf: function (type) {
      return WIDGET_TITLES[type];
    },
    build: function (type, config, legend, value, onChange) {
      return WIDGETS[type](config, legend, value, onChange);
    },
    // A widget type drawn by a file of its own (see widget_toolkit.js).
    add: function (type, builder, title) {
      WIDGETS[type] = builder;
      WIDGET_TITLES[type] = title;
    },
    // A widget the keys can reach, found again by its element.
    track: function (widget) {
      widgetByElement.set(widget.element, widget);
      return widget;
    },
    tracked: function (element) {
      return widgetByElement.get(element) || null;
    },
  };
}
