// A small code editor: a textarea over a highlighted <pre>, a line-number gutter, and
// violation marks. Highlighting comes from the server (pygments) with the violations, so the
// browser never needs a second highlighter; until the answer arrives the overlay shows the
// plain text, so typing never lags.
(function () {
  "use strict";

  function escapeHtml(text) {
    return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
  }

  class CodeEditor {
    constructor(root, { onChange } = {}) {
      this.root = root;
      this.textarea = root.querySelector("textarea");
      this.overlay = root.querySelector(".editor-overlay code");
      this.gutter = root.querySelector(".editor-gutter");
      this.onChange = onChange || (() => {});
      this.version = 0;
      this.violations = [];
      this.textarea.addEventListener("input", () => this.changed());
      this.textarea.addEventListener("scroll", () => this.syncScroll());
      this.textarea.addEventListener("keydown", (event) => this.keydown(event));
      this.renderPlain();
    }

    get value() {
      return this.textarea.value;
    }

    set value(text) {
      this.textarea.value = text;
      this.changed();
    }

    append(text) {
      this.textarea.value += text;
      this.textarea.scrollTop = this.textarea.scrollHeight;
      this.changed();
    }

    changed() {
      this.version += 1;
      this.renderPlain();
      this.onChange(this.value, this.version);
    }

    keydown(event) {
      if (event.key === "Tab" && !event.ctrlKey && !event.metaKey) {
        event.preventDefault();
        const { selectionStart: start, selectionEnd: end } = this.textarea;
        this.textarea.setRangeText("    ", start, end, "end");
        this.changed();
      }
    }

    lineCount() {
      return this.value.split("\n").length;
    }

    renderPlain() {
      // A trailing newline needs a visible line, or the overlay ends one line short.
      this.overlay.innerHTML = escapeHtml(this.value) + "\n";
      this.renderGutter();
      this.syncScroll();
    }

    renderHighlighted(version, html) {
      if (version !== this.version) return; // an answer for older text: wait for the newer one
      if (html === null || html === undefined) return; // too big to highlight: stays plain
      this.overlay.innerHTML = html + "\n";
      this.syncScroll();
    }

    markViolations(version, violations) {
      if (version !== this.version) return;
      this.violations = violations;
      this.renderGutter();
    }

    renderGutter() {
      const byLine = new Map();
      for (const v of this.violations) {
        if (v.line) byLine.set(v.line, (byLine.get(v.line) ? byLine.get(v.line) + "\n" : "") + v.message);
      }
      const lines = [];
      for (let n = 1; n <= this.lineCount(); n += 1) {
        const message = byLine.get(n);
        lines.push(
          message
            ? `<span class="line violation" data-line="${n}" title="${escapeHtml(message).replace(/"/g, "&quot;")}">${n}</span>`
            : `<span class="line" data-line="${n}">${n}</span>`,
        );
      }
      this.gutter.innerHTML = lines.join("");
    }

    syncScroll() {
      const pre = this.overlay.parentElement;
      pre.scrollTop = this.textarea.scrollTop;
      pre.scrollLeft = this.textarea.scrollLeft;
      this.gutter.scrollTop = this.textarea.scrollTop;
    }
  }

  window.JazzmineEditor = CodeEditor;
})();
