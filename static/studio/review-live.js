// The review page follows the queue socket (htmx ws): when someone else (or the clock) decides
// this submission, the socket sends #decision-refresh with the status the server now has.
// If the decision panel shows another status, it is stale: the refresh element's own htmx
// request (hx-trigger="stale") reloads it. Compared here, not in an hx-trigger filter, which
// htmx would have to eval (the Content-Security-Policy refuses eval).
(function () {
  "use strict";

  document.addEventListener("htmx:load", (event) => {
    const elt = event.target;
    if (!(elt instanceof Element)) return;
    const refresh = elt.id === "decision-refresh" ? elt : elt.querySelector("#decision-refresh");
    if (!refresh || !refresh.dataset.status) return;
    const panel = document.getElementById("decision-panel");
    if (panel && panel.dataset.status !== refresh.dataset.status) window.htmx.trigger(refresh, "stale");
  });
})();
