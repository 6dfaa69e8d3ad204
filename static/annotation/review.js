/* Keys and checks for the review page (templates/annotation/review_item.html).
 *
 * The page works without this script: decisions are plain form posts, and
 * the server refuses a rejection without a comment. The script adds the
 * keys (1-9 go to an annotator's card; a accepts; r goes to the comment,
 * and rejects once there is one; Ctrl+Enter in a comment rejects with it,
 * Escape leaves it; n goes to the next item), says at once that a
 * rejection needs a comment, and filters a tree's message rows. No inline
 * script, no globals.
 */
(function () {
  "use strict";

  var root = document.querySelector("[data-review]");
  if (!root) {
    return;
  }
  var cards = Array.prototype.slice.call(root.querySelectorAll("[data-column]"));
  var current = null;

  function isTextEntry(target) {
    if (!target || !target.tagName) {
      return false;
    }
    if (target.isContentEditable || target.tagName === "TEXTAREA" || target.tagName === "SELECT") {
      return true;
    }
    return target.tagName === "INPUT" && ["radio", "checkbox", "button", "submit"].indexOf(target.type) < 0;
  }

  function formOf(card) {
    return card ? card.querySelector("[data-decision-form]") : null;
  }

  // The card the keys act on: the one holding the focus, else the last one gone to,
  // else the first that can still be decided on.
  function activeCard() {
    var holder = document.activeElement && document.activeElement.closest ? document.activeElement.closest("[data-column]") : null;
    return holder || current || cards.find(formOf) || null;
  }

  function goTo(card) {
    current = card;
    card.focus();
    card.scrollIntoView({ block: "nearest" });
  }

  function decide(card, decision) {
    var form = formOf(card);
    if (!form) {
      return;
    }
    var button = form.querySelector(decision === "accepted" ? "[data-accept]" : "[data-reject]");
    if (form.requestSubmit) {
      form.requestSubmit(button);
    } else {
      button.click();
    }
  }

  cards.forEach(function (card) {
    var form = formOf(card);
    if (!form) {
      return;
    }
    var comment = form.querySelector("[data-comment]");
    var needed = form.querySelector("[data-comment-needed]");
    card.addEventListener("focusin", function () {
      current = card;
    });
    form.addEventListener("submit", function (event) {
      var rejecting = event.submitter && event.submitter.value === "rejected";
      if (rejecting && !comment.value.trim()) {
        event.preventDefault();
        needed.hidden = false;
        comment.focus();
        return;
      }
      // One decision per page load: a second press must not post it twice. After this turn:
      // a button disabled now would leave the form's data without the decision.
      setTimeout(function () {
        Array.prototype.forEach.call(form.querySelectorAll("button"), function (button) {
          button.disabled = true;
        });
      }, 0);
    });
    comment.addEventListener("input", function () {
      if (comment.value.trim()) {
        needed.hidden = true;
      }
    });
    comment.addEventListener("keydown", function (event) {
      if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
        event.preventDefault();
        decide(card, "rejected");
      } else if (event.key === "Escape") {
        card.focus();
      }
    });
  });

  document.addEventListener("keydown", function (event) {
    if (event.altKey || event.ctrlKey || event.metaKey || isTextEntry(event.target)) {
      return;
    }
    var card;
    if (/^[1-9]$/.test(event.key)) {
      card = cards[parseInt(event.key, 10) - 1];
      if (card) {
        event.preventDefault();
        goTo(card);
      }
      return;
    }
    switch (event.key) {
      case "a":
        card = activeCard();
        if (formOf(card)) {
          event.preventDefault();
          decide(card, "accepted");
        }
        break;
      case "r":
        card = activeCard();
        if (formOf(card)) {
          event.preventDefault();
          var comment = card.querySelector("[data-comment]");
          // A rejection says what to fix: with no comment yet, r opens the box for it.
          if (comment.value.trim()) {
            decide(card, "rejected");
          } else {
            comment.focus();
          }
        }
        break;
      case "n":
        var next = root.querySelector("[data-next]");
        if (next) {
          event.preventDefault();
          window.location.href = next.href;
        }
        break;
      default:
        return;
    }
  });

  // A tree's rows: all messages, only those someone answered, only those where answers differ.
  Array.prototype.forEach.call(root.querySelectorAll("[data-section]"), function (section) {
    var answered = section.querySelector("[data-only-answered]");
    var differing = section.querySelector("[data-only-differing]");
    if (!answered || !differing) {
      return;
    }
    var rows = Array.prototype.slice.call(section.querySelectorAll("tr[data-node]"));
    function apply() {
      rows.forEach(function (row) {
        row.hidden = (answered.checked && !row.hasAttribute("data-answered")) || (differing.checked && !row.hasAttribute("data-differ"));
      });
    }
    answered.addEventListener("change", apply);
    differing.addEventListener("change", apply);
  });
})();
