// The playground page: live validation while typing, LLM generation streamed into the editor,
// runs streamed into the output pane, retries and auto mode. All over one websocket: a run's
// pane and its live fragments are rendered by the server (the run page's partials) and placed
// with htmx. A pane reloaded mid-run follows on a socket of its own (htmx ws).
(function () {
  "use strict";

  const root = document.getElementById("playground");
  if (!root) return;

  const $ = (id) => document.getElementById(id);
  const state = {
    sandbox: root.dataset.sandbox,
    session: root.dataset.session || "",
    attemptId: null, // the generated attempt the editor holds, until someone edits it
    generatedBody: null,
    validVersion: -1,
    busy: false,
    lastFailed: root.dataset.lastFailed === "1",
    language: root.dataset.language || "python", // "python" or "bash"
    autoRuns: new Set(), // runs of auto mode: its own messages tell how they ended
    heldReason: null, // why the loop stopped short: a script needs a person, the LLM failed
    generating: false, // an answer is coming (a cancel now leaves half of it in the editor)
  };
  const buttons = {
    generate: $("generate-button"),
    run: $("run-button"),
    retry: $("retry-button"),
    auto: $("auto-button"),
    cancel: $("cancel-button"),
  };
  const llmConfigured = !$("llm-missing");

  function status(text) {
    $("playground-status").textContent = text || "";
  }

  function task() {
    return $("task").value;
  }

  function refreshButtons() {
    const empty = !editor.value.trim();
    const canGenerate = llmConfigured;
    buttons.run.disabled = state.busy || empty || state.validVersion !== editor.version;
    buttons.generate.disabled = state.busy || !canGenerate;
    buttons.auto.disabled = state.busy || !canGenerate;
    buttons.retry.disabled = state.busy || !canGenerate || !state.lastFailed;
    buttons.cancel.hidden = !state.busy;
  }

  function setBusy(busy, text) {
    state.busy = busy;
    if (text !== undefined) status(text);
    refreshButtons();
  }

  function setSession(id) {
    if (!id || id === state.session) return;
    state.session = id;
    root.dataset.session = id;
    $("session-field").value = id;
    root.dataset.attemptsUrl = `/playground/sessions/${id}/attempts/`;
    const url = new URL(window.location.href);
    url.search = `?session=${id}`;
    window.history.replaceState(null, "", url);
    watchSession();
  }

  // Hear of the session's attempts changing elsewhere: a page reloaded during a generation was
  // rendered before the old page's socket closed and stored it as stopped.
  function watchSession() {
    if (state.session && state.opened) socket.send({ type: "watch", session: state.session });
  }

  // One read of the attempts at a time, and one more after it if any was asked meanwhile.
  // htmx queued a read asked during another aimed at the list the first then replaced, and
  // dropped it: the run that had ended meanwhile stayed "Running" until a reload.
  let attemptsReading = false;
  let attemptsAgain = false;
  function refreshAttempts() {
    if (!root.dataset.attemptsUrl || !window.htmx) return;
    if (attemptsReading) {
      attemptsAgain = true;
      return;
    }
    attemptsReading = true;
    window.htmx
      .ajax("GET", root.dataset.attemptsUrl, { target: "#attempt-list", swap: "outerHTML" })
      .finally(() => {
        attemptsReading = false;
        if (attemptsAgain) {
          attemptsAgain = false;
          refreshAttempts();
        }
      });
  }

  function refreshPrompt() {
    if (window.htmx) window.htmx.trigger(document.body, "refresh-prompt");
  }

  function renderViolations(list) {
    const ul = $("violations");
    ul.replaceChildren();
    for (const v of list) {
      const li = document.createElement("li");
      li.className = "violation";
      if (v.line) li.dataset.line = v.line;
      li.textContent = v.message;
      ul.append(li);
    }
  }

  // A script past what the playground runs is said here, never sent: a frame of more than
  // 1 MiB is dropped by the server without a word, and the page sent it again on every
  // reconnect, for as long as it stayed open.
  const maxBody = Number(root.dataset.maxBody) || Infinity;

  function validate(version, text) {
    if (text.length > maxBody) {
      state.validVersion = -1;
      renderViolations([{
        line: null,
        message: `The script is ${text.length.toLocaleString("en")} characters long; the playground runs scripts of at most ${maxBody.toLocaleString("en")}.`,
      }]);
      return;
    }
    socket.send({ type: "validate", version, sandbox: state.sandbox, body: text, language: state.language });
  }

  const CONNECTION_TEXT = {
    reconnecting: "Connection to the studio lost: reconnecting… (what you do now is sent once it is back)",
    refused: "This page may no longer talk to the studio (signed out, or no longer in the sandbox's team): reload it to sign in again.",
    closed: "Disconnected from the studio: reload the page.",
  };

  const editor = new window.JazzmineEditor($("editor"), {
    onChange: (text, version) => {
      if (state.generatedBody !== null && text !== state.generatedBody) {
        state.attemptId = null; // edited by a person: running it makes a new attempt
        state.generatedBody = null;
      }
      validate(version, text);
      refreshButtons();
    },
  });

  function pane() {
    return document.querySelector("#run-output-slot [data-run-output]");
  }

  function runStatus(el) {
    const badge = el && el.querySelector("[data-run-status]");
    return badge ? badge.dataset.status : "";
  }

  function finished(status) {
    return status === "succeeded" || status === "failed";
  }

  // A new script is on its way into the editor: the pane's run was of another one (another
  // attempt, perhaps another task), and shown under the new script it read as its outcome.
  function clearPane() {
    $("run-output-slot").replaceChildren();
    $("output-card").hidden = true;
  }

  const handlers = {
    run_pane(m) {
      window.htmx.swap($("run-output-slot"), m.html, { swapStyle: "innerHTML" });
      $("output-card").hidden = false;
    },
    run_html(m) {
      // The last words of a run the pane no longer shows (Auto's next attempt cleared it):
      // their regions are gone, and its end reaches the attempts list through `status`.
      const current = pane();
      if (!current || current.dataset.runId !== m.run_id) return;
      // Out-of-band fragments: each names the region of the pane it appends to or replaces.
      window.htmx.swap(document.body, m.html, { swapStyle: "none" });
    },
    status(m) {
      if (!finished(m.status)) return;
      const current = pane();
      if (!current || current.dataset.runId !== m.run_id) {
        refreshAttempts(); // a run of an earlier attempt ended: its row says so
        return;
      }
      state.lastFailed = m.status === "failed";
      // A run's status may come after the auto loop's last word: it must not hide it.
      const said = m.status === "failed" && m.outcome === "cancelled" ? "cancelled" : m.status;
      if (!state.auto && !state.autoRuns.has(m.run_id)) setBusy(false, `run ${said}`);
      refreshAttempts();
      refreshPrompt();
    },
    validation(m) {
      editor.renderHighlighted(m.version, m.html);
      editor.markViolations(m.version, m.violations);
      if (m.version === editor.version) {
        renderViolations(m.violations);
        state.validVersion = m.violations.length ? -1 : m.version;
        refreshButtons();
      }
    },
    session(m) {
      setSession(m.session);
    },
    generation_started() {
      clearPane();
      state.heldReason = null;
      setBusy(true, "generating…");
    },
    auto_started() {
      state.auto = true;
      state.heldReason = null;
      setBusy(true, "auto mode…");
    },
    attempt_started(m) {
      clearPane();
      // The list numbers attempts once they are stored (the server's `number` from
      // `generated` on): the loop's own count (`m.attempt`) starts again at each Generate.
      status("generating…");
      state.generating = true;
      state.attemptId = null;
      state.generatedBody = null;
      editor.value = "";
    },
    token(m) {
      editor.append(m.text);
    },
    generated(m) {
      state.generatedBody = m.body;
      editor.value = m.body;
      state.attemptId = m.attempt_id;
      state.generating = false;
      status(`attempt ${m.number} generated in ${m.seconds.toFixed(2)} s`);
      refreshAttempts();
    },
    validated(m) {
      if (m.violations.length) {
        state.lastFailed = true;
        status(`attempt ${m.number ?? m.attempt} has ${m.violations.length} violation(s)`);
      }
    },
    llm_error(m) {
      state.generating = false;
      state.lastFailed = true;
      // Kept for `finished`: Auto's summary ("no success in 1 attempt(s)") hid why.
      state.heldReason = `LLM error: ${m.error}`;
      status(state.heldReason);
      refreshAttempts();
    },
    generation_finished() {
      setBusy(false);
      refreshPrompt();
    },
    run_started() {},
    run_created(m) {
      if (state.auto) state.autoRuns.add(m.run_id);
      setSession(m.session);
      // The editor still holds the attempt until someone edits it: Run again runs the LLM's
      // script again, as the LLM's (it was recorded as a person's).
      if (m.attempt_id && state.generatedBody !== null) state.attemptId = m.attempt_id;
      setBusy(true, "running…");
      refreshAttempts();
    },
    run_refused(m) {
      renderViolations(m.violations);
      state.lastFailed = true;
      setBusy(false, "the script was refused");
      refreshAttempts();
    },
    run_finished(m) {
      status(`attempt ${m.number ?? m.attempt}: ${m.success ? "succeeded" : "failed"}`);
    },
    held(m) {
      // The loop stopped before running a script that needs a person: it stays in the
      // editor, and Run (a person's own) runs it.
      state.heldReason = m.reason;
    },
    finished(m) {
      state.auto = false;
      state.lastFailed = !m.success;
      const summary = m.success ? `succeeded after ${m.attempts} attempt(s)` : `no success in ${m.attempts} attempt(s)`;
      setBusy(false, state.heldReason || summary);
      state.heldReason = null;
      refreshAttempts();
      refreshPrompt();
    },
    cancelled() {
      state.auto = false;
      // Stopped mid-answer: the editor holds what the LLM had sent, which is no whole script.
      setBusy(false, state.generating ? "cancelled: the editor holds the LLM's unfinished answer" : "cancelled");
      state.generating = false;
      // A generation cut short is an attempt of its own now ("stopped"), stored before this.
      refreshAttempts();
    },
    watching() {
      refreshAttempts();  // what was stored before the socket heard of the session
    },
    attempts_changed(m) {
      if (m.session === state.session) refreshAttempts();
    },
    run_cancelling() {
      status("stopping the run…");
    },
    error(m) {
      state.auto = false;
      setBusy(false, m.message);
    },
  };

  const socket = new window.JazzmineSocket("/ws/playground/", {
    onMessage: (m) => (handlers[m.type] || (() => {}))(m),
    onOpen: () => {
      // After a drop the server no longer follows the run for this socket: ask again, from
      // the last event the pane was rendered with (the live lines are sent again whole).
      const current = pane();
      if (state.opened && current && current.hasAttribute("data-run-fed") && !finished(runStatus(current))) {
        socket.send({ type: "follow", run_id: current.dataset.runId, after: Number(current.dataset.runSeq) || 0 });
      }
      state.opened = true;
      watchSession();
      socket.send({ type: "prewarm", sandbox: state.sandbox });
      validate(editor.version, editor.value);
    },
    onStatus: (s) => {
      root.dataset.socket = s;
      // Said where the person looks, not only in an attribute: a page signed out in another
      // tab kept its buttons grey and said nothing.
      $("playground-connection").textContent = CONNECTION_TEXT[s] || "";
    },
  });

  function common() {
    return { sandbox: state.sandbox, session: state.session, task: task(), language: state.language };
  }

  buttons.generate.addEventListener("click", () => socket.send({ type: "generate", retry: false, ...common() }));
  buttons.retry.addEventListener("click", () => socket.send({ type: "generate", retry: true, ...common() }));
  buttons.auto.addEventListener("click", () =>
    socket.send({ type: "auto", max_attempts: Number($("max-attempts").value) || 3, ...common() }),
  );
  buttons.cancel.addEventListener("click", () => {
    // A page reloaded mid-run did not start the run it shows: it names it.
    const current = pane();
    socket.send({ type: "cancel", run_id: current ? current.dataset.runId : undefined });
  });
  // Ctrl+Enter (Cmd+Enter on a Mac) runs the editor's script, as in other playgrounds.
  root.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && (e.ctrlKey || e.metaKey) && !buttons.run.disabled) {
      e.preventDefault();
      buttons.run.click();
    }
  });
  buttons.run.addEventListener("click", () => {
    setBusy(true, "starting run…");
    socket.send({
      type: "run",
      body: editor.value,
      attempt_id: state.attemptId,
      retry: state.lastFailed,
      language: state.language,
      ...common(),
    });
  });

  // Another sandbox is another page: its prompt, tools and sessions.
  const sandboxSelect = $("sandbox-select");
  const languageSelect = $("language-select");
  if (sandboxSelect) {
    sandboxSelect.addEventListener("change", () => {
      const query = new URLSearchParams({ sandbox: sandboxSelect.value });
      if (languageSelect) query.set("language", languageSelect.value);
      window.location.search = `?${query}`;
    });
  }

  // Python or bash: the prompt panel follows by itself (htmx); the editor is checked again.
  if (languageSelect) {
    languageSelect.addEventListener("change", () => {
      state.language = languageSelect.value;
      root.dataset.language = state.language;
      state.validVersion = -1;
      state.attemptId = null;
      state.generatedBody = null;
      const url = new URL(window.location.href);
      url.searchParams.set("language", state.language);
      window.history.replaceState(null, "", url);
      validate(editor.version, editor.value);
      refreshButtons();
    });
  }

  // A page reloaded mid-run follows the run it was showing on the pane's own socket, and is
  // as busy as the page that started it was: Cancel stops it, Run waits for its end, and its
  // end updates the status line, the attempts and the prompt as a run started here does.
  const existing = pane();
  if (existing && !finished(runStatus(existing))) {
    setBusy(true, "running…");
    existing.addEventListener("htmx:wsAfterMessage", () => {
      const ended = runStatus(existing);
      if (!finished(ended) || !state.busy) return;
      state.lastFailed = ended === "failed";
      const badge = existing.querySelector("[data-run-status]");
      const cancelled = badge && badge.classList.contains("status-cancelled");
      setBusy(false, `run ${cancelled ? "cancelled" : ended}`);
      refreshAttempts();
      refreshPrompt();
    });
  }
  refreshButtons();
})();
