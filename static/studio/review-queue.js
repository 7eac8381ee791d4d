// The live review queue and review page. The server renders every row with the same partial
// as the first page load and pushes it over /ws/reviews/queue/; this file only places it.
(function () {
  "use strict";

  function setBadges(count) {
    document.querySelectorAll("[data-review-badge]").forEach((el) => {
      el.textContent = String(count);
      el.classList.toggle("empty", !count);
    });
  }

  function rowFrom(html) {
    const template = document.createElement("template");
    template.innerHTML = html.trim();
    return template.content.querySelector("tr");
  }

  function queueUrl(table) {
    const params = new URLSearchParams();
    if (table && table.dataset.filterSandbox) params.set("sandbox", table.dataset.filterSandbox);
    if (table && table.dataset.filterAge) params.set("age", table.dataset.filterAge);
    const query = params.toString();
    return `/ws/reviews/queue/${query ? "?" + query : ""}`;
  }

  class Queue {
    constructor(table) {
      this.table = table;
      document.body.dataset.reviewLive = "page"; // this page's socket keeps the badge live
      this.socket = new window.JazzmineSocket(() => queueUrl(this.table), {
        onMessage: (message) => this.receive(message),
        onStatus: (state) => {
          const el = document.querySelector("[data-queue-connection]");
          if (el) el.textContent = state === "open" ? "live" : state;
          document.body.dataset.queueSocket = state;
        },
      });
      // A filter change swaps the table: follow the new filters on a new socket.
      document.body.addEventListener("htmx:afterSwap", (event) => {
        const fresh = document.getElementById("queue-table");
        if (fresh && fresh !== this.table && event.detail.target.id === "queue-table") {
          this.table = fresh;
          this.socket.ws.close();
          this.refreshCount();
        }
      });
    }

    receive(message) {
      if (message.type === "count") setBadges(message.count);
      if (message.type !== "submission") return;
      setBadges(message.count);
      const tbody = this.table.querySelector("tbody");
      const existing = document.getElementById(`submission-${message.id}`);
      if (message.in_queue && message.html) {
        const row = rowFrom(message.html);
        if (existing) existing.replaceWith(row);
        else {
          // Oldest first: a new submission goes after every older row.
          const created = Number(row.dataset.created);
          const after = [...tbody.querySelectorAll("tr.queue-row")].find(
            (r) => Number(r.dataset.created) > created,
          );
          tbody.insertBefore(row, after || tbody.querySelector("tr.queue-empty"));
          row.classList.add("arrived");
        }
      } else if (existing) {
        existing.remove();
      }
      this.refreshCount();
    }

    refreshCount() {
      const rows = this.table.querySelectorAll("tr.queue-row").length;
      const empty = this.table.querySelector("tr.queue-empty");
      if (empty) empty.hidden = rows > 0;
      document.querySelectorAll("[data-queue-count]").forEach((el) => (el.textContent = String(rows)));
    }
  }

  function attachRunStreams(root) {
    if (!root || !window.JazzmineRunStream) return;
    root.querySelectorAll("[data-run-output]").forEach((el) => {
      if (!el._runStream) window.JazzmineRunStream.attach(el);
    });
  }

  function typing(target) {
    return target && (target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName));
  }

  function panel() {
    return document.getElementById("decision-panel");
  }

  function shortcuts(event) {
    if (event.ctrlKey && event.key === "Enter" && typing(event.target)) {
      const form = event.target.closest("form");
      if (form) {
        event.preventDefault();
        form.requestSubmit();
      }
      return;
    }
    const root = panel();
    const approval = root && root.querySelector("[data-approve-panel]");
    if (event.key === "Escape") {
      if (approval && approval.open) {
        event.preventDefault();
        cancelApproval(approval);
      } else if (typing(event.target)) {
        event.target.blur();
      }
      return;
    }
    if (typing(event.target) || event.ctrlKey || event.metaKey || event.altKey) return;
    if (!root) return;
    if (event.key === "a") {
      if (!approval) return;
      event.preventDefault();
      if (event.repeat) return; // a held key is one press, never the confirmation too
      // First press: show the confirm step. Second press: approve and run.
      if (approval.open) approval.querySelector("form").requestSubmit();
      else openApproval(approval);
    } else if (event.key === "e") {
      const details = root.querySelector("[data-edit-panel]");
      const editor = root.querySelector("[data-edit-body]");
      if (details && editor) {
        event.preventDefault();
        details.open = true;
        editor.focus();
      }
    } else if (event.key === "r") {
      const feedback = root.querySelector("[data-feedback]");
      if (feedback) {
        event.preventDefault();
        feedback.focus();
      }
    }
  }

  function openApproval(approval) {
    approval.open = true;
    approval.querySelector("[data-approve-confirm]").focus();
  }

  function cancelApproval(approval) {
    approval.open = false;
    approval.querySelector("summary").focus();
  }

  function attachReview(root) {
    if (!root) return;
    document.body.dataset.reviewLive = "page"; // this page's socket keeps the badge live
    attachRunStreams(root);
    document.addEventListener("keydown", shortcuts);
    document.addEventListener("click", (event) => {
      const cancel = event.target.closest("[data-approve-cancel]");
      if (cancel) cancelApproval(cancel.closest("[data-approve-panel]"));
    });
    // Opening the step by mouse puts the focus on its confirm button too.
    document.addEventListener(
      "toggle",
      (event) => {
        const approval = event.target;
        if (approval.matches && approval.matches("[data-approve-panel]") && approval.open) {
          approval.querySelector("[data-approve-confirm]").focus();
        }
      },
      true,
    );
    document.body.addEventListener("htmx:afterSwap", () => attachRunStreams(panel()));
    const id = root.dataset.submissionId;
    // Another reviewer (or the clock) may decide first: refresh the panel when that happens.
    new window.JazzmineSocket("/ws/reviews/queue/", {
      onMessage: (message) => {
        if (message.count !== undefined) setBadges(message.count);
        const current = panel();
        if (message.type !== "submission" || message.id !== id || !current) return;
        if (current.dataset.status !== message.status && window.htmx) {
          window.htmx.ajax("GET", window.location.pathname, { target: "#decision-panel", swap: "outerHTML" });
        }
      },
    });
  }

  window.JazzmineReviewQueue = {
    attachQueue(table) {
      if (table) return new Queue(table);
      return null;
    },
    attachReview,
  };
})();
