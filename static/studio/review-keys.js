// The review page's keys: a approves (in two presses), e edits, r writes feedback, Esc backs
// out, Ctrl+Enter submits the form being typed in. Everything live on the page is htmx.
(function () {
  "use strict";

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

  function attach() {
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
  }

  if (panel()) attach();
})();
