// Behaviour every page shares, declared in the markup with data attributes: the
// Content-Security-Policy refuses inline handlers (onsubmit=, hx-on), so they live here.
// - form[data-confirm]: asks before submitting; the question is read as text, never as code.
// - a live socket's state (htmx ws): a run pane's [data-run-connection], the review queue's
//   [data-queue-connection] and body[data-queue-socket].
// - a run page's Cancel ([data-run-cancel]) goes once its run has ended: it sits outside the
//   pane the socket updates, and pressing it then did nothing.
(function () {
  "use strict";

  document.addEventListener("submit", (event) => {
    const form = event.target;
    if (!(form instanceof HTMLFormElement) || !form.hasAttribute("data-confirm")) return;
    if (!window.confirm(form.dataset.confirm)) event.preventDefault();
  });

  // Closes that reconnect by themselves (htmx ws retries them): abnormal, server errors, restarts.
  const TRANSIENT = [1006, 1011, 1012, 1013];

  function closeCode(event) {
    const detail = event.detail && event.detail.event;
    return detail ? detail.code : 0;
  }

  document.addEventListener("htmx:wsOpen", (event) => {
    const elt = event.target;
    if (elt.matches("[data-run-output]")) {
      const connection = elt.querySelector("[data-run-connection]");
      if (connection) connection.textContent = "";
    } else if (elt.id === "queue-live") {
      document.body.dataset.queueSocket = "open";
      const connection = document.querySelector("[data-queue-connection]");
      if (connection) connection.textContent = "live";
    }
  });

  const ENDED = ["succeeded", "failed"];

  document.addEventListener("htmx:wsAfterMessage", (event) => {
    const elt = event.target;
    if (!elt.matches("[data-run-output]")) return;
    const badge = elt.querySelector("[data-run-status]");
    if (!badge || !ENDED.includes(badge.dataset.status)) return;
    for (const form of document.querySelectorAll("form[data-run-cancel]")) form.remove();
  });

  document.addEventListener("htmx:wsClose", (event) => {
    const elt = event.target;
    // A region swapped away (new filters, a finished pane) closes its socket: not news.
    if (!elt.isConnected) return;
    const code = closeCode(event);
    if (elt.matches("[data-run-output]")) {
      const connection = elt.querySelector("[data-run-connection]");
      if (connection) connection.textContent = TRANSIENT.includes(code) ? "reconnecting" : code >= 4000 ? "refused" : "";
    } else if (elt.id === "queue-live") {
      const state = TRANSIENT.includes(code) ? "reconnecting" : "closed";
      document.body.dataset.queueSocket = state;
      const connection = document.querySelector("[data-queue-connection]");
      if (connection) connection.textContent = state;
    }
  });
})();
