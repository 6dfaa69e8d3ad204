/* Saving on the annotate page: drafts as the annotator goes, submit, skip,
 * and what happens when the server refuses.
 *
 * Every change is saved as a draft after a short pause (PUT .../draft with
 * the version it was based on, and the time spent on the page while it was
 * visible); a save the network lost is tried again. A 409 (the item changed
 * in another tab: stale_version), 403 or 404 stops saving for good and
 * offers a reload or the next item; other refusals list the server's errors
 * and keep the changes unsaved. Submit and skip wait for a save under way,
 * then POST and load the next item (or show a training item's feedback).
 *
 * Nothing is lost on leaving: when the page is hidden or left (pagehide,
 * visibilitychange, a click on a link or a form that navigates), a pending
 * draft is sent at once with fetch's keepalive, which outlives the page.
 * Left with a save under way, the page sends its last changes at once, based
 * on the same version: each draft names the page and its number, so the
 * server takes the later one whichever arrives first (submissions.py).
 * A link or form of the page waits for the draft's answer before it
 * navigates (so the next page finds it saved), a little while only when the
 * draft went with keepalive. Browsers carry at most 64 KB of keepalive
 * bodies, so a larger draft is saved the ordinary way, and waited for.
 * The page asks before it is left ("Leave site?") only when leaving would
 * lose answers: a save failed (refused, or the network lost it), or a draft
 * too large for keepalive is still unsaved as the page closes.
 */

import { el } from "./elements.js";

var SAVE_DELAY_MS = 600;
var RETRY_DELAY_MS = 5000;
var MAX_TIME_MS = 3600000;
// Under half of the browsers' 64 KB for keepalive bodies in flight: a save under way and one sent on leaving fit together.
var KEEPALIVE_BYTES = 30000;
// How long a link waits for a draft that goes with keepalive before it navigates anyway.
var NAVIGATION_WAIT_MS = 1500;

// options: part, data (the page data: the item's version, the API URLs),
// item ({editable}), answers (answers.js) and onFeedback(feedback), called
// when a submitted training item answers with its expected answers; taken (a
// Set of the schemes copied from a suggestion, sent with every save) and
// onSuggestions(suggestions), called when a submit answers with a judge's
// suggestion (true when it is shown: the page then stays).
export function createAutosave(options) {
  var part = options.part;
  var data = options.data;
  var item = options.item;
  var answers = options.answers;
  var version = data.item.assignment.version;
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
  // The last save was refused or lost: the changes since are only on this page.
  var saveFailed = false;
  // The page's name for itself, and its drafts' count: see flush().
  var pageName = Array.from(crypto.getRandomValues(new Uint8Array(12)), function (byte) {
    return byte.toString(16).padStart(2, "0");
  }).join("");
  var drafts = 0;
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
    if (!item.editable || stopped) {
      return;
    }
    dirty = true;
    setStatus("Unsaved changes…");
    clearTimeout(saveTimer);
    saveTimer = setTimeout(save, SAVE_DELAY_MS);
  }

  function bytes(text) {
    return new TextEncoder().encode(text).length;
  }

  // Whether the answers as they stand can be sent with keepalive.
  function fitsKeepalive() {
    return bytes(JSON.stringify(writeBody(true))) <= KEEPALIVE_BYTES;
  }

  // Sent with keepalive whenever the body allows, so that a save under way is carried out even
  // if the page is left meanwhile.
  function send(method, url, body) {
    var text = JSON.stringify(body);
    return fetch(url, {
      method: method,
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", Accept: "application/json", "X-CSRFToken": csrfToken },
      body: text,
      keepalive: bytes(text) <= KEEPALIVE_BYTES,
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

  // `measure`: only to weigh the body, leaving the time on the page to the next save.
  function writeBody(measure) {
    var body = { annotations: answers.collect(), version: version, time_spent_ms: measure ? MAX_TIME_MS : takeTime() };
    // The schemes whose answer was copied from a judge's suggestion (suggestions.js).
    var taken = options.taken ? Array.from(options.taken) : [];
    if (taken.length) {
      body.suggestions_taken = taken;
    }
    return body;
  }

  function draftBody() {
    drafts += 1;
    return Object.assign(writeBody(), { page: pageName, sequence: drafts });
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
    var body = draftBody();
    inFlight = send("PUT", data.urls.draft, body).then(function (result) {
      inFlight = null;
      if (result.ok) {
        version = result.body.version;
        saveFailed = false;
        errorBox.hidden = true;
        setStatus(dirty ? "Unsaved changes…" : "All changes saved");
        return true;
      }
      bankedMs += body.time_spent_ms;
      dirty = true;
      saveFailed = true;
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
    if (!item.editable || stopped || leaving) {
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
            options.onFeedback(result.body.feedback);
            return;
          }
          // A judge's suggestion shown only once the item is submitted (suggestions.js).
          if (result.body.suggestions && options.onSuggestions && options.onSuggestions(result.body.suggestions)) {
            setStatus("Submitted.");
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

  function skip() {
    if (!item.editable || stopped) {
      return;
    }
    if (window.confirm("Skip this item? It goes to someone else and you will not see it again.")) {
      finish(data.urls.skip, function () {
        return { version: version };
      }, "Skipping");
    }
  }

  // The page is going (`away`) or only hidden: a pending draft is sent now. Going, with a save
  // under way, the draft cannot wait for its answer: it is sent at once, based on the same
  // version as that save, and both outlive the page. They may reach the server in either order
  // (or together): it keeps this later draft of the page, which holds all its changes.
  function flush(away) {
    if (!item.editable || stopped || leaving || !dirty) {
      return;
    }
    if (!inFlight || !away) {
      save();
      return;
    }
    clearTimeout(saveTimer);
    saveTimer = null;
    dirty = false;
    send("PUT", data.urls.draft, draftBody());
  }

  // A link or form of the page that navigates: the draft goes first, and the navigation waits
  // for its answer, so that the next page finds it saved, and a refusal keeps the annotator
  // here, with the changes and the server's reasons. A draft that goes with keepalive (small,
  // and the last save did not fail) waits only so long: it is carried out after the page is left.
  function beforeNavigating(event, go) {
    if (!item.editable || stopped || leaving || !dirty) {
      return;
    }
    event.preventDefault();
    var gone = false;
    function leave() {
      if (!gone) {
        gone = true;
        go();
      }
    }
    if (!saveFailed && fitsKeepalive()) {
      setTimeout(leave, NAVIGATION_WAIT_MS);
    }
    save().then(function (ok) {
      if (ok && !dirty) {
        leave();
      }
    });
  }

  document.addEventListener("click", function (event) {
    var link = event.target.closest ? event.target.closest("a[href]") : null;
    if (!link || event.defaultPrevented || event.button !== 0 || event.ctrlKey || event.metaKey || event.shiftKey || event.altKey) {
      return;
    }
    if ((link.target && link.target !== "_self") || link.hasAttribute("download") || link.origin !== window.location.origin) {
      return;
    }
    if (link.pathname === window.location.pathname && link.search === window.location.search && link.hash) {
      return; // a jump within the page
    }
    beforeNavigating(event, function () {
      window.location.assign(link.href);
    });
  });

  document.addEventListener("submit", function (event) {
    var form = event.target;
    if (form.method === "dialog") {
      return;
    }
    beforeNavigating(event, function () {
      form.requestSubmit(event.submitter);
    });
  });

  window.addEventListener("pagehide", function () {
    flush(true);
  });

  document.addEventListener("visibilitychange", function () {
    if (document.hidden) {
      flush(false);
    }
  });

  // Asks only when leaving would lose answers: a failed save, or a draft too large to go with
  // keepalive. Else the draft goes now, before the request for the next page (pagehide comes
  // only once that page answers), so that the next page, or this one reloaded, finds it saved.
  window.addEventListener("beforeunload", function (event) {
    if (item.editable && !stopped && !leaving && dirty && (saveFailed || !fitsKeepalive())) {
      event.preventDefault();
      event.returnValue = "";
      return;
    }
    flush(true);
  });

  function next() {
    leaving = true;
    nextForm.submit();
  }

  // Nothing more is saved, and the page may be left without asking (a
  // training item's feedback is showing).
  function end() {
    stopped = true;
    leaving = true;
  }

  part("reload").addEventListener("click", function () {
    leaving = true;
    window.location.reload();
  });
  part("next-item").addEventListener("click", next);
  var submitButton = part("submit");
  if (submitButton) {
    submitButton.addEventListener("click", submit);
  }
  var skipButton = part("skip");
  if (skipButton) {
    skipButton.addEventListener("click", skip);
  }

  return {
    changed: changed,
    submit: submit,
    skip: skip,
    setStatus: setStatus,
    next: next,
    end: end,
  };
}
