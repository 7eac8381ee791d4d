// Render a run's live events into its output pane. The pane reconnects by itself and asks
// for the events after the last sequence number it has, so a dropped socket loses nothing.
(function () {
  "use strict";

  function pretty(data) {
    return typeof data === "string" ? data : JSON.stringify(data, null, 2);
  }

  // "+5 ms" for the first second, then seconds: a 20 s timeout reads "+20.0 s".
  function since(seconds) {
    const ms = Math.max(0, seconds * 1000);
    if (ms < 1000) return `+${Math.round(ms)} ms`;
    return `+${(ms / 1000).toFixed(ms < 10000 ? 2 : 1)} s`;
  }

  function parsedJson(text) {
    if (typeof text !== "string" || !text.trim()) return undefined;
    try {
      return JSON.parse(text);
    } catch (_error) {
      return undefined;
    }
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
      // The timeline counts from the run's creation (server clock, as event times are). A pane
      // that does not know it yet counts from its first event until the first status says.
      const started = Number.parseFloat(root.dataset.runStarted);
      this.startKnown = Number.isFinite(started);
      this.startTs = this.startKnown ? started : null;
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

    start(createdAt) {
      const started = Date.parse(createdAt) / 1000;
      if (this.startKnown || !Number.isFinite(started)) return;
      this.startKnown = true;
      this.startTs = started;
      this.root.dataset.runStarted = String(started);
      this.root.querySelectorAll(".since[data-ts]").forEach((el) => {
        el.textContent = since(Number(el.dataset.ts) - started);
      });
    }

    sinceLabel(ts) {
      const el = item("span", "since", since(ts - this.startTs));
      el.dataset.ts = ts;
      return el;
    }

    isBashResult(data) {
      if (this.root.dataset.runLanguage === "python") return false;
      return data !== null && typeof data === "object" && typeof data.stdout === "string" && "exit_code" in data;
    }

    // A bash result is its stdout: shown as text, or pretty-printed when it is JSON.
    result(data) {
      this.find("result").hidden = false;
      const body = this.find("result-body");
      const meta = this.find("result-meta");
      const stderr = this.find("result-stderr");
      if (!this.isBashResult(data)) {
        body.textContent = pretty(data);
        body.dataset.format = "json";
        return;
      }
      const value = "json" in data ? data.json : parsedJson(data.stdout);
      const isJson = value !== undefined;
      body.textContent = isJson ? JSON.stringify(value, null, 2) : data.stdout || "(no output)";
      body.dataset.format = isJson ? "json" : "text";
      const parts = [isJson ? "stdout, as JSON" : "stdout", `exit ${data.exit_code}`];
      if (data.calls !== undefined) parts.push(`${data.calls} tool call(s)`);
      if (data.duration_ms !== undefined) parts.push(`${Math.round(data.duration_ms)} ms`);
      if (meta) meta.textContent = parts.join(" · ");
      if (stderr && data.stderr) {
        stderr.hidden = false;
        this.find("result-stderr-body").textContent = data.stderr;
      }
    }

    status(message) {
      if (message.created_at) this.start(message.created_at);
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
      const data = event.data || {};
      if (event.type === "log") {
        const li = item("li", "log");
        li.dataset.seq = event.seq;
        li.append(this.sinceLabel(event.ts), item("span", "text", pretty(data.message ?? data)));
        this.find("logs").append(li);
      } else if (event.type === "intermediate") {
        const li = item("li", "intermediate");
        li.dataset.seq = event.seq;
        li.append(this.sinceLabel(event.ts), item("strong", "label", data.label ?? ""));
        li.append(item("pre", "json", pretty(data.data ?? data)));
        this.find("timeline").append(li);
      } else if (event.type === "result") {
        this.result(data);
      } else if (event.type === "error") {
        this.find("error").hidden = false;
        const text = [data.message, data.traceback].filter(Boolean).join("\n\n");
        this.find("error-body").textContent = text || pretty(data);
      } else if (event.type === "exit") {
        const li = item("li", `exit outcome-${data.outcome}`);
        li.dataset.seq = event.seq;
        li.append(this.sinceLabel(event.ts), item("strong", "label", `exit: ${data.outcome}`));
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
