// Render a run's live events into its output pane. The pane reconnects by itself and asks
// for the events after the last sequence number it has, so a dropped socket loses nothing.
(function () {
  "use strict";

  function pretty(data) {
    return typeof data === "string" ? data : JSON.stringify(data, null, 2);
  }

  function item(tag, className, text) {
    const el = document.createElement(tag);
    if (className) el.className = className;
    if (text !== undefined) el.textContent = text;
    return el;
  }

  class RunStream {
    // With `fed`, another socket (the playground's) delivers the messages through receive();
    // connect() gives the stream a socket of its own, resuming after the last event it has.
    constructor(root, { onEvent, onStatus, fed } = {}) {
      this.root = root;
      this.runId = root.dataset.runId;
      this.lastSeq = 0;
      this.startTs = null;
      this.finished = false;
      this.socket = null;
      this.onEvent = onEvent || (() => {});
      this.onStatus = onStatus || (() => {});
      this.find = (name) => root.querySelector(`[data-run-${name}]`);
      if (!fed) this.connect();
    }

    connect() {
      if (this.socket || this.finished) return;
      this.socket = new window.JazzmineSocket(() => `/ws/runs/${this.runId}/?after=${this.lastSeq}`, {
        onMessage: (message) => this.receive(message),
        onStatus: (state) => {
          const el = this.find("connection");
          if (el) el.textContent = state === "open" || state === "closed" ? "" : state;
        },
      });
    }

    close() {
      if (this.socket) this.socket.close();
    }

    receive(message) {
      if (message.run_id && message.run_id !== this.runId) return;
      if (message.type === "event") this.event(message.event);
      else if (message.type === "status") this.status(message);
    }

    status(message) {
      const badge = this.find("status");
      badge.className = `badge status-${message.status}`;
      badge.textContent = message.status;
      if (message.message) this.find("message").textContent = message.message;
      this.root.dataset.status = message.status;
      if (message.status === "succeeded" || message.status === "failed") {
        this.finished = true;
        this.close();
      }
      this.onStatus(message);
    }

    event(event) {
      if (event.seq <= this.lastSeq) return;
      this.lastSeq = event.seq;
      if (this.startTs === null) this.startTs = event.ts;
      const since = `+${Math.round((event.ts - this.startTs) * 1000)} ms`;
      const data = event.data || {};
      if (event.type === "log") {
        const li = item("li", "log");
        li.dataset.seq = event.seq;
        li.append(item("span", "since", since), item("span", "text", pretty(data.message ?? data)));
        this.find("logs").append(li);
      } else if (event.type === "intermediate") {
        const li = item("li", "intermediate");
        li.dataset.seq = event.seq;
        li.append(item("span", "since", since), item("strong", "label", data.label ?? ""));
        li.append(item("pre", "json", pretty(data.data ?? data)));
        this.find("timeline").append(li);
      } else if (event.type === "result") {
        this.find("result").hidden = false;
        this.find("result-body").textContent = pretty(data);
      } else if (event.type === "error") {
        this.find("error").hidden = false;
        const text = [data.message, data.traceback].filter(Boolean).join("\n\n");
        this.find("error-body").textContent = text || pretty(data);
      } else if (event.type === "exit") {
        const li = item("li", `exit outcome-${data.outcome}`);
        li.dataset.seq = event.seq;
        li.append(item("span", "since", since), item("strong", "label", `exit: ${data.outcome}`));
        li.append(item("span", "text", ` ${data.message || ""}`));
        this.find("timeline").append(li);
      }
      this.onEvent(event);
    }
  }

  window.JazzmineRunStream = {
    attach(root, options) {
      if (root._runStream) root._runStream.close();
      root._runStream = new RunStream(root, options);
      return root._runStream;
    },
  };
})();
