/* The task page (templates/collection/task.html): keeps the task's lease while the page is open,
   submits with Ctrl+Enter, and orders replies to rank by dragging or with the keyboard. */
(function () {
  "use strict";

  var page = document.querySelector("[data-task]");
  if (!page) return;
  var form = page.querySelector("[data-task-form]");
  var token = document.querySelector("[name=csrfmiddlewaretoken]");

  // The lease: acknowledging renews it, so ask again well before it runs out.
  var leaseSeconds = parseInt(page.getAttribute("data-lease-seconds"), 10) || 300;
  if (form && page.getAttribute("data-ack-url")) {
    window.setInterval(function () {
      window.fetch(page.getAttribute("data-ack-url"), {
        method: "POST",
        credentials: "same-origin",
        headers: { "Content-Type": "application/json", Accept: "application/json", "X-CSRFToken": token.value },
        body: "{}",
      });
    }, Math.max(15, leaseSeconds / 2) * 1000);
  }

  // Ctrl+Enter submits the task from anywhere on the page (focus may be on the page itself,
  // a reply being ranked or a link), except inside another form (skip, report) of its own.
  if (form) {
    document.addEventListener("keydown", function (event) {
      if (event.key !== "Enter" || !(event.ctrlKey || event.metaKey) || event.defaultPrevented) return;
      var inForm = event.target.closest && event.target.closest("form");
      if (inForm && inForm !== form) return;
      event.preventDefault();
      form.requestSubmit();
    });
  }

  var list = page.querySelector("[data-ranking]");
  if (list) {
    var number = function () {
      var items = list.querySelectorAll("[data-reply]");
      for (var i = 0; i < items.length; i++) {
        items[i].querySelector(".rank-position").textContent = String(i + 1);
        items[i].setAttribute("aria-label", "Reply ranked " + (i + 1) + " of " + items.length);
      }
    };
    var move = function (item, direction) {
      if (direction === "up" && item.previousElementSibling) {
        list.insertBefore(item, item.previousElementSibling);
      } else if (direction === "down" && item.nextElementSibling) {
        list.insertBefore(item.nextElementSibling, item);
      }
      number();
      item.focus();
    };
    list.addEventListener("click", function (event) {
      var button = event.target.closest("[data-move]");
      if (button) move(button.closest("[data-reply]"), button.getAttribute("data-move"));
    });
    list.addEventListener("keydown", function (event) {
      var item = event.target.closest("[data-reply]");
      if (!item || event.target !== item) return;
      if (event.altKey && (event.key === "ArrowUp" || event.key === "ArrowDown")) {
        event.preventDefault();
        move(item, event.key === "ArrowUp" ? "up" : "down");
      } else if (event.key === "ArrowUp" && item.previousElementSibling) {
        event.preventDefault();
        item.previousElementSibling.focus();
      } else if (event.key === "ArrowDown" && item.nextElementSibling) {
        event.preventDefault();
        item.nextElementSibling.focus();
      }
    });
    var dragged = null;
    list.addEventListener("dragstart", function (event) {
      dragged = event.target.closest("[data-reply]");
      if (dragged) {
        dragged.classList.add("dragging");
        event.dataTransfer.effectAllowed = "move";
        event.dataTransfer.setData("text/plain", dragged.getAttribute("data-reply"));
      }
    });
    list.addEventListener("dragover", function (event) {
      var over = event.target.closest("[data-reply]");
      if (!dragged || !over || over === dragged) return;
      event.preventDefault();
      var box = over.getBoundingClientRect();
      list.insertBefore(dragged, event.clientY < box.top + box.height / 2 ? over : over.nextElementSibling);
    });
    list.addEventListener("dragend", function () {
      if (dragged) dragged.classList.remove("dragging");
      dragged = null;
      number();
    });
    number();
  }
  page.setAttribute("data-ready", "true");
})();
