// Keep build logs pinned to their newest line while the reader has not scrolled up, the way
// CI logs behave. Lines arrive as htmx out-of-band swaps (appended, or the whole log replaced
// on reconnect), so this watches the DOM rather than any one element.
(function () {
  "use strict";

  const SELECTOR = ".build-log";
  const SLACK_PX = 24; // "at the bottom" within a line or so
  const pinned = new Map(); // element id -> following the tail; replaced elements keep it

  function atBottom(el) {
    return el.scrollHeight - el.scrollTop - el.clientHeight <= SLACK_PX;
  }

  function follow() {
    document.querySelectorAll(SELECTOR).forEach((el) => {
      if (pinned.get(el.id) !== false) el.scrollTop = el.scrollHeight;
    });
  }

  // Scroll events do not bubble, but they can be caught on the way down.
  document.addEventListener(
    "scroll",
    (event) => {
      const el = event.target;
      if (el instanceof Element && el.matches(SELECTOR)) pinned.set(el.id, atBottom(el));
    },
    true,
  );

  function start() {
    follow();
    new MutationObserver(follow).observe(document.body, {
      childList: true,
      subtree: true,
      characterData: true,
    });
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
