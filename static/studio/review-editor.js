// The reviewer's editor: the playground's editor and live checks (over the same socket
// service), so an edit shows its violations on their lines before it is approved.
(function () {
  "use strict";

  let socket = null;
  const editors = new Map(); // version owner: the one editor on the page at a time

  function connect() {
    if (socket) return socket;
    socket = new window.JazzmineSocket("/ws/playground/", {
      onMessage: (m) => {
        if (m.type !== "validation") return;
        for (const item of editors.values()) item.answer(m);
      },
    });
    return socket;
  }

  function attach(root) {
    if (root._reviewEditor) return;
    const form = root.closest("form");
    const approve = form && form.querySelector("[data-edit-approve]");
    const list = form && form.querySelector("[data-edit-violations]");
    const textarea = root.querySelector("[data-edit-body]");
    const check = (text, version) =>
      connect().send({
        type: "validate",
        version,
        sandbox: root.dataset.sandbox,
        language: root.dataset.language,
        body: text,
      });
    const editor = new window.JazzmineEditor(root, {
      onChange: (text, version) => {
        check(text, version);
        // The server reads the edit's tools (htmx, hx-trigger="edited"): the gate decides.
        if (window.htmx && textarea) window.htmx.trigger(textarea, "edited");
      },
    });
    const item = {
      answer(m) {
        editor.renderHighlighted(m.version, m.html);
        editor.markViolations(m.version, m.violations);
        if (m.version !== editor.version || !list) return;
        list.replaceChildren(
          ...m.violations.map((v) => {
            const li = document.createElement("li");
            li.className = "violation";
            li.textContent = v.message;
            return li;
          }),
        );
        if (approve) approve.disabled = m.violations.length > 0;
      },
    };
    root._reviewEditor = item;
    editors.clear();
    editors.set(root, item);
    check(editor.value, editor.version);
  }

  function scan(scope) {
    (scope || document).querySelectorAll("[data-review-editor]").forEach(attach);
  }

  document.addEventListener("htmx:load", (event) => scan(event.target));
  scan(document);
})();
