// Keep the navigation's Reviews badge live on every page. Review pages follow the queue on a
// socket of their own (htmx ws) and set body[data-review-live]; every other page opens
// a badge-only socket, which the server answers with counts and nothing else.
(function () {
  "use strict";

  const badges = () => document.querySelectorAll("[data-review-badge]");
  if (document.body.dataset.reviewLive || !badges().length) return;
  document.body.dataset.reviewLive = "badge";

  let delay = 500;
  function connect() {
    const scheme = window.location.protocol === "https:" ? "wss:" : "ws:";
    const ws = new WebSocket(`${scheme}//${window.location.host}/ws/reviews/queue/?badge=1`);
    ws.onopen = () => {
      delay = 500;
      document.body.dataset.badgeSocket = "open";
    };
    ws.onmessage = (event) => {
      const message = JSON.parse(event.data);
      if (typeof message.count !== "number") return;
      badges().forEach((el) => {
        el.textContent = String(message.count);
        el.classList.toggle("empty", !message.count);
      });
    };
    ws.onclose = (event) => {
      document.body.dataset.badgeSocket = "closed";
      if (event.code === 4403 || event.code === 4404) return; // logged out: nothing to follow
      setTimeout(connect, delay);
      delay = Math.min(delay * 2, 10000);
    };
  }
  connect();
})();
