/* The "Show source" toggle of messages drawn by templates/trees/message_body.html:
 * shows the button (hidden without scripts) and swaps a message's rendered
 * Markdown for its exact text and back, with aria-pressed saying which shows.
 * One listener for the page, so bodies added later work too. No inline
 * script, no globals.
 */
(function () {
  "use strict";

  function showToggles() {
    Array.prototype.forEach.call(document.querySelectorAll("[data-message-source-toggle]"), function (toggle) {
      toggle.hidden = false;
    });
  }

  document.addEventListener("click", function (event) {
    var toggle = event.target.closest ? event.target.closest("[data-message-source-toggle]") : null;
    var body = toggle ? toggle.closest("[data-message-body]") : null;
    if (!body) {
      return;
    }
    var showSource = toggle.getAttribute("aria-pressed") !== "true";
    toggle.setAttribute("aria-pressed", showSource ? "true" : "false");
    body.querySelector("[data-message-rendered]").hidden = showSource;
    body.querySelector("[data-message-source]").hidden = !showSource;
  });

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", showToggles);
  } else {
    showToggles();
  }
})();
