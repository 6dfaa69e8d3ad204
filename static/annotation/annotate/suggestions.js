/* A judge's suggestion on the annotate page (a project's `suggestions:`,
 * annotation.work.suggestions), always marked as a model's, never as an answer.
 *
 * show: before — the page data brings the judge's answers: shown above the
 * conversation with "Use the suggestion" (u), which copies them into the
 * annotator's answers; Ctrl+Z (or the toast's Undo) puts theirs back. The
 * schemes copied are sent with each save (`suggestions_taken`), so the server
 * records that the answer came from the suggestion.
 *
 * show: after — nothing of the judge is on the page until the annotator
 * submits: the submit answers with the suggestion, shown with a Next item
 * button, the answers closed (as a training item's feedback is). A submitted
 * item shows it again when revisited.
 */

import { el } from "./elements.js";

function isTextEntry(target) {
  if (!target || !target.tagName) {
    return false;
  }
  if (target.isContentEditable || target.tagName === "TEXTAREA" || target.tagName === "SELECT") {
    return true;
  }
  return target.tagName === "INPUT" && ["radio", "checkbox", "button", "submit"].indexOf(target.type) < 0;
}

// options: root, part, item ({editable}), answers (answers.js), taken (a Set
// of the scheme names copied, read by autosave.js), autosave, undo, flash,
// redraw() (draws the answers again) and changed() (saves them).
export function createSuggestions(options) {
  var root = options.root;
  var part = options.part;
  var item = options.item;
  var answers = options.answers;
  var taken = options.taken;
  var box = part("suggestion");
  var shown = null;

  // Only the schemes the page draws can take a suggestion.
  function drawn(name) {
    return answers.treeSchemes.concat(answers.itemSchemes).some(function (scheme) {
      return scheme.name === name;
    });
  }

  function draw(suggestions) {
    shown = suggestions;
    var before = suggestions.show === "before";
    var rows = part("suggestion-rows");
    // Shown after answering, the annotator's own answers are beside the judge's.
    var yours = suggestions.schemes.some(function (entry) {
      return entry.yours !== undefined;
    });
    var head = part("suggestion-head");
    head.textContent = "";
    ["Question", "Suggested answer"].concat(yours ? ["Your answer"] : []).forEach(function (text) {
      head.appendChild(el("th", { scope: "col", text: text }));
    });
    rows.textContent = "";
    suggestions.schemes.forEach(function (entry) {
      rows.appendChild(el("tr", { "data-suggestion-scheme": entry.scheme }, [
        el("th", { scope: "row", text: entry.description || entry.scheme }),
        el("td", { "data-suggested": true, text: entry.text }),
        yours ? el("td", { "data-yours": true, text: entry.yours }) : null,
      ]));
    });
    part("suggestion-heading").textContent = "Model suggestion: " + suggestions.judge;
    part("suggestion-who").textContent = before
      ? "Answered by a model, the judge " + suggestions.judge + " (" + suggestions.from + "). It is a suggestion, not the answer: check it against the conversation. Use the suggestion (u) copies it into your answers; Ctrl+Z takes it back."
      : "Answered by a model, the judge " + suggestions.judge + " (" + suggestions.from + "). You see it only now that you have submitted: your answers were your own.";
    part("suggestion-use").hidden = !before;
    box.hidden = !suggestions.schemes.length;
    return !box.hidden;
  }

  // Copies the suggestion into the answers; true when the key was taken.
  function use() {
    if (!shown || shown.show !== "before" || !shown.schemes.length) {
      return false;
    }
    if (!item.editable) {
      options.flash("This item is read-only: press e (Edit) to change it, then u to use the suggestion.");
      return true;
    }
    var entries = shown.schemes.filter(function (entry) {
      return drawn(entry.scheme);
    });
    var mine = answers.collect();
    var previous = entries.map(function (entry) {
      return { name: entry.scheme, payload: mine[entry.scheme], taken: taken.has(entry.scheme) };
    });
    entries.forEach(function (entry) {
      answers.load(entry.scheme, entry.payload);
      taken.add(entry.scheme);
    });
    options.redraw();
    options.changed();
    options.undo.push("Suggestion used", function () {
      previous.forEach(function (answer) {
        answers.load(answer.name, answer.payload);
        if (!answer.taken) {
          taken.delete(answer.name);
        }
      });
      options.redraw();
      options.changed();
    });
    options.flash("The suggestion is in your answers: check each one before you submit.");
    return true;
  }

  // A submit's answer, with show: after. True when it is shown (the page then waits for Next item).
  function showAfterSubmit(suggestions) {
    if (!draw(suggestions)) {
      return false;
    }
    item.editable = false;
    options.autosave.end();
    [part("submit"), part("skip")].forEach(function (button) {
      if (button) {
        button.hidden = true;
      }
    });
    root.querySelectorAll("[data-widget] input, [data-widget] textarea, [data-widget] select, [data-widget] button").forEach(function (control) {
      control.disabled = true;
    });
    var next = part("suggestion-next");
    next.hidden = false;
    next.focus();
    return true;
  }

  part("suggestion-use").addEventListener("click", use);
  part("suggestion-next").addEventListener("click", options.autosave.next);
  document.addEventListener("keydown", function (event) {
    // A key the page's own keys took (a label whose key_value is u) stays theirs.
    if (event.key !== "u" || event.defaultPrevented || event.altKey || event.ctrlKey || event.metaKey || isTextEntry(event.target)) {
      return;
    }
    var help = part("help");
    if (help && help.open) {
      return;
    }
    if (use()) {
      event.preventDefault();
    }
  });

  function start(suggestions) {
    if (!suggestions) {
      return;
    }
    draw(suggestions);
    var help = part("help");
    if (suggestions.show === "before" && help) {
      help.querySelector("tbody").appendChild(el("tr", {}, [
        el("th", { scope: "row" }, [el("kbd", { text: "u" })]),
        el("td", { text: "use the model's suggestion: copy it into your answers (Ctrl+Z takes it back)" }),
      ]));
    }
  }

  return { start: start, showAfterSubmit: showAfterSubmit };
}
