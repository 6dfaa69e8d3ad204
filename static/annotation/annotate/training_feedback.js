/* Training feedback on the annotate page.
 *
 * A submitted training item answers with its expected answers beside the
 * annotator's (annotation.quality.training): shown here, with the score and where
 * the training stands, until they go on to the next item. The answers stay
 * as they were sent: nothing can be changed or saved any more. Gold checks
 * in the real work never answer with any.
 */

import { el } from "./elements.js";

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

// options: root (the page's [data-annotate] element), part, item
// ({editable}) and autosave (autosave.js).
export function createTrainingFeedback(options) {
  var root = options.root;
  var part = options.part;
  var item = options.item;
  var autosave = options.autosave;

  function showFeedback(feedback) {
    item.editable = false;
    autosave.end();
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
    // Markdown, rendered and sanitised on the server (trees/markdown.py), as messages are.
    var explanation = part("feedback-explanation-text");
    if (typeof feedback.explanation_html === "string") {
      explanation.innerHTML = feedback.explanation_html;
    } else {
      explanation.textContent = feedback.explanation || "";
    }
    part("feedback-status").textContent = trainingNews(feedback.training);
    autosave.setStatus("Submitted.");
    var box = part("feedback");
    box.hidden = false;
    part("feedback-next").focus();
  }

  part("feedback-next").addEventListener("click", autosave.next);

  return { show: showFeedback };
}
