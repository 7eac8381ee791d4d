"""Writes for runs: create one, record its events as they arrive, end it."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NotRequired, TypedDict

from django.conf import settings
from django.contrib.auth.base_user import AbstractBaseUser
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from jazzmine.bash.generator import script_problems
from jazzmine.core.tools import body_numbered, body_offset, plain_newlines
from jazzmine.gate import Reading
from jazzmine.sandbox import Outcome

from ..catalog.models import Sandbox, Tool
from ..catalog.selectors import tools_called
from ..catalog.services.registry import registry_for_sandbox
from ..studio.checker import PROCESS_THRESHOLD_CHARS, checked
from ..studio.db import DATABASE_UNREACHABLE
from ..studio.drawn import comments_that_run
from ..studio.enqueue import task_send_after_commit
from ..studio.live import group_send
from ..studio.storable import storable_json
from .models import Language, Run, RunEvent, RunStatus, code_sha256
from .reading import python_script, script_read
from .signals import run_created, run_finished

logger = logging.getLogger(__name__)


class RunRefused(ValueError):
    """A script that may not run: it has violations, or it is not a script at all."""

    def __init__(self, violations: list[str]) -> None:
        super().__init__("; ".join(violations))
        self.violations = violations


class RunEventsMessage(TypedDict):
    """A channel-layer message: events of a run, stored together, in order."""

    type: str  # "run.events"
    run_id: str
    events: list[dict[str, Any]]


class RunStatusMessage(TypedDict):
    """A channel-layer message: a run changed status."""

    type: str  # "run.status"
    run_id: str
    status: str
    outcome: str
    message: str
    # The run's notes whole (what it was refused as it was prepared), when this status tells
    # them; absent: the watcher keeps the notes it shows.
    notes: NotRequired[list[str]]


def run_group(run_id: object) -> str:
    """Return the channel group of one run."""
    return f"run-{run_id}"


def script_assemble(*, sandbox: Sandbox, body: str) -> tuple[str, list[str]]:
    """Return the assembled script for a body and its violations, numbered by body line.

    A big body is assembled and validated in the checker process (`studio.checker`), which
    raises `CheckerUnavailable` when it cannot: nothing big is parsed in a web process.
    """
    names = registry_for_sandbox(sandbox).tool_names(sandbox.name)
    script, violations = checked(len(body), python_script, body, sandbox.name, names)
    # People and LLMs see the body, not the preamble: point at the lines they wrote.
    return script, body_numbered(violations, body_offset(script))


def run_create(
    *,
    sandbox: Sandbox,
    user: AbstractBaseUser | None,
    body: str,
    task: str = "",
    attempt: int = 1,
    source: str = "playground",
    language: str = Language.PYTHON,
    start: bool = True,
    allowed_tools: Mapping[str, str] | Iterable[str] | None = None,
    allowed_by_reviewer: bool = False,
    api_token: Any = None,
) -> Run:
    """Validate a script body and queue its run; refuse it with its violations.

    Python bodies are assembled with the sandbox's preamble and validated; bash bodies run
    as they are, in bashkit inside the sandbox, after a light check (`bash_check`).
    `allowed_tools` is the decision that let the script run, carried into the sandbox: None
    (every tool) when a member runs it themselves or the policy never reviews; with
    `allowed_by_reviewer`, the tools a reviewer was shown and approved, as {name: the
    `code_digest` it had then}; else the names it may call (the always-allowed tools, when
    the policy let it through without a person), best as {name: the `code_digest` accepted
    then}. The worker holds each tool to its digest.
    `api_token` is the agent's token such a policy let the run through on: it stops when
    that token no longer opens the API.
    """
    # Every caller's body, read with the line ends every page draws (`plain_newlines`).
    body = plain_newlines(body)
    script, violations = script_check(sandbox=sandbox, body=body, language=language)
    if violations:
        raise RunRefused(violations)
    # One transaction: a run is committed (and handed to a worker) with its audit entry, or
    # not at all, whatever a receiver of `run_created` fails on.
    with transaction.atomic():
        run = Run.objects.create(
            sandbox=sandbox,
            created_by=user if user is not None and user.is_authenticated else None,
            language=language,
            task=task,
            body=body,
            script=script,
            body_offset=body_offset(script) if language == Language.PYTHON else 0,
            code_sha256=code_sha256(script),
            attempt=attempt,
            source=source,
            allowed_tools=(
                None
                if allowed_tools is None
                else dict(sorted(allowed_tools.items()))
                if isinstance(allowed_tools, Mapping)
                else sorted(set(allowed_tools))
            ),
            allowed_by_reviewer=allowed_by_reviewer and allowed_tools is not None,
            api_token=api_token,
            # Set with the row: queueing it costs no second write.
            enqueued_at=timezone.now() if start else None,
        )
        run_created.send(sender=Run, run=run, user=run.created_by)
        if start:
            run_start(run=run)
    return run


def script_check(*, sandbox: Sandbox, body: str, language: str) -> tuple[str, list[str]]:
    """Return the script that would run for a body, and its violations (by body line).

    Read with plain line ends, as it is drawn: bash reads a lone `\\r` as part of a line.
    """
    body = plain_newlines(body)
    if language == Language.BASH:
        return body, bash_check(body=body, sandbox=sandbox)
    if language == Language.PYTHON:
        return script_assemble(sandbox=sandbox, body=body)
    return body, [f"Line 1: scripts in {language!r} cannot run in a sandbox; use python or bash"]


def bash_check(*, body: str, sandbox: Sandbox) -> list[str]:
    """Return the problems of a bash body that make it unfit to run in a sandbox.

    bashkit is the real wall (logic-only shell, limits on commands, loops and time); this
    refuses what can never be a script (nothing, too much, binary), a command nothing
    answers to, as the editor does (a call of a name that is no tool yet is refused when it
    comes in, not left for a reviewer's list of tools that cannot show it), and code every
    page would draw as a comment (`studio.drawn`).
    """
    tools = list(Tool.objects.filter(sandbox_id=sandbox.pk).values_list("name", flat=True))
    limit = settings.JAZZMINE_MAX_BASH_CHARS
    return checked(len(body), script_problems, body, max_chars=limit, tools=tools) or checked(
        len(body), comments_that_run, body
    )


def run_tools_called(
    *, sandbox: Sandbox, body: str, language: str = Language.PYTHON, script: str | None = None
) -> list[dict[str, Any]]:
    """Return the published tools a body calls or may call: name, kind, always_allow, secrets, why.

    The review policy reads this: a script that calls, or may call, any tool without
    `always_allow` needs a human decision. The reading works on the script that runs (fences
    stripped, as assembled), never on the raw body; pass `script` when it is already built.

    A big script is read in the checker process (`studio.checker`).
    """
    if script is None:
        script, _violations = script_check(sandbox=sandbox, body=body, language=language)
    return tools_called(
        script=script,
        tools=sandbox.tool_rows(),
        language=language,
        body_offset=body_offset(script) if language == Language.PYTHON else 0,
        read=_read_checked if len(script) >= PROCESS_THRESHOLD_CHARS else None,
    )


def _read_checked(script: str, *, language: str, tools: list[str]) -> Reading:
    # Plain text: the checker process has no Django to unpickle a `Language` with.
    return checked(len(script), script_read, script, str(language), list(tools))


def run_start(*, run: Run) -> None:
    """Hand a queued run to the task queue once its row is committed (a worker claims it)."""
    if run.enqueued_at is None:
        run_enqueue(run_id=run.pk)
    else:
        _send_after_commit(run.pk)


def run_enqueue(*, run_id: object) -> None:
    """Queue a task for a queued run again; a second task for one run is harmless."""
    Run.objects.filter(pk=run_id, status=RunStatus.QUEUED).update(enqueued_at=timezone.now())
    _send_after_commit(run_id)


def _send_after_commit(run_id: object) -> None:
    # Unsent (the broker down), the run waits queued and the reaper queues it again.
    task_send_after_commit("runs.execute", str(run_id))


def run_set_status(
    *,
    run_id: object,
    status: str,
    unless_finished: bool = False,
    notes_told: Sequence[str] | None = None,
    **fields: Any,
) -> bool:
    """Change a run's status (and other columns) and tell its watchers; tell whether it changed.

    With `unless_finished`, a run that has finished already is left as it is, untold.
    `notes_told`: the run's notes (stored already), told to its watchers with the status.
    """
    now = timezone.now()
    if status == RunStatus.RUNNING:
        fields.setdefault("started_at", now)
        # What the run waited on ("building image") is over: its page and the API said it
        # for as long as the run went on.
        fields.setdefault("message", "")
    if status in RunStatus.finished():
        fields.setdefault("finished_at", now)
    runs = Run.objects.filter(pk=run_id)
    if unless_finished:
        runs = runs.exclude(status__in=RunStatus.finished())
    if not runs.update(status=status, **fields):
        return False
    outcome = str(fields.get("outcome", ""))
    run_status_announce(
        run_id=run_id,
        status=status,
        outcome=outcome,
        message=str(fields.get("message", "")),
        notes=notes_told,
    )
    if status in RunStatus.finished():
        transaction.on_commit(
            lambda: run_finished.send(sender=Run, run_id=run_id, status=status, outcome=outcome)
        )
    return True


def run_status_announce(
    *,
    run_id: object,
    status: str,
    outcome: str = "",
    message: str = "",
    notes: Sequence[str] | None = None,
) -> None:
    """Tell a run's watchers its status (already stored), with its notes when given."""
    payload: RunStatusMessage = {
        "type": "run.status",
        "run_id": str(run_id),
        "status": status,
        "outcome": outcome,
        "message": message,
    }
    if notes is not None:
        payload["notes"] = list(notes)
    group_send(run_group(run_id), dict(payload))


def run_record_event(*, run_id: object, event: dict[str, Any]) -> bool:
    """Store one event, update its run and stream it; tell whether it was stored."""
    return run_record_events(run_id=run_id, events=[event])


FirstEvent = tuple[float, bool | None]  # ms to a run's first event, and whether it was warm


def run_record_events(
    *,
    run_id: object,
    events: list[dict[str, Any]],
    first: FirstEvent | None = None,
    again: bool = False,
) -> bool:
    """Store events of a run in one transaction, then stream them; tell whether all were stored.

    `first` comes with a run's first batch: how long its sandbox took to that first event,
    and whether it was started already. It is written once the events are sent (watchers
    see them first) and before an `exit` among them ends the run, so that a run reads as
    finished only with it.

    The worker hands over what arrived while it stored the previous events, so a burst costs
    one write and one message per batch instead of per event. An event the database refuses
    (a duplicate number, data it cannot hold, a run deleted meanwhile) ends the run as failed
    with a message saying so, instead of leaving it `running` forever; the first end of a run
    wins, so a later `exit` cannot turn such a run into a success. The worker stops a run
    whose event was refused.

    A NUL character in an event (a script printed one) is stored and sent as U+FFFD
    (`studio.storable`): output is kept, never refused, and reads the same everywhere.

    A database that does not answer refuses nothing: `DATABASE_UNREACHABLE` is raised, and
    the worker hands the same events over again, `again`, once it answers. The first try may
    have stored them before the answer was lost: a batch is stored whole or not at all, so
    one found stored is not stored twice (its message, first event and end still follow).
    """
    events = storable_json(events)
    try:
        if not (again and _events_stored_already(run_id, events)):
            _events_store(run_id, events)
    except DATABASE_UNREACHABLE:
        raise
    except Exception as exc:  # any refusal of the database: the run must still end
        if len(events) > 1:
            # One by one, up to the event it refuses: those before it are kept and streamed.
            return all(run_record_event(run_id=run_id, event=event) for event in events)
        logger.exception("run %s: could not store event %r", run_id, events[0].get("seq"))
        message = (
            f"failed: an event of this run could not be stored ({type(exc).__name__}); "
            "the run was stopped"
        )
        _run_end(run_id=run_id, status=RunStatus.FAILED,
                 outcome=Outcome.PROTOCOL_ERROR.value, message=message)  # fmt: skip
        return False
    # Stored first, then sent: a watcher that replays from the database after joining the
    # group misses nothing, and drops duplicates by sequence number.
    message_: RunEventsMessage = {"type": "run.events", "run_id": str(run_id), "events": events}
    group_send(run_group(run_id), dict(message_))
    if first is not None:
        run_first_event_set(run_id=run_id, ms=first[0], warm=first[1])
    for event in events:
        data = event.get("data")
        if event.get("type") == "exit" and isinstance(data, dict):
            outcome = str(data.get("outcome", ""))
            # A sandbox's exit names its backend; an end it never reported on (`run_fail`: a
            # cancel, a lost worker) names none and keeps the one the run started on.
            backend = str(data.get("backend", ""))
            _run_end(
                run_id=run_id,
                status=RunStatus.SUCCEEDED if outcome == Outcome.RESULT else RunStatus.FAILED,
                outcome=outcome,
                message=str(data.get("message", "")),
                duration_ms=data.get("duration_ms"),
                **({"backend": backend} if backend else {}),
            )
    return True


def _events_stored_already(run_id: object, events: list[dict[str, Any]]) -> bool:
    return bool(events) and RunEvent.objects.filter(run_id=run_id, seq=events[0]["seq"]).exists()


def _events_store(run_id: object, events: list[dict[str, Any]]) -> None:
    changes: dict[str, Any] = {"event_count": F("event_count") + len(events)}
    for event in events:  # in order: the last result or error of the batch is the run's
        kind, data = event.get("type"), event.get("data")
        if kind == "result":
            changes["result"] = data
        elif kind == "error" and isinstance(data, dict):
            changes["error"] = error_text(data)
    with transaction.atomic():
        RunEvent.objects.bulk_create(
            RunEvent(run_id=run_id, seq=e["seq"], type=e.get("type"), data=e.get("data"),
                     ts=e["ts"])
            for e in events
        )  # fmt: skip
        Run.objects.filter(pk=run_id).update(**changes)


def _run_end(*, run_id: object, status: str, **fields: Any) -> None:
    """Finish a run unless it has already finished (the first end of a run wins).

    One conditional write: two ends at once (the reaper's and the worker's own exit) cannot
    both apply, nor both be announced.
    """
    run_set_status(run_id=run_id, status=status, unless_finished=True, **fields)


def error_text(data: dict[str, Any]) -> str:
    """Return an error event as the text a person (or the retry prompt) reads."""
    message = str(data.get("message", "")).strip()
    trace = str(data.get("traceback", "") or "").strip()
    if trace and trace != message:
        return f"{message}\n\n{trace}"
    return message


def run_fail(*, run_id: object, outcome: Outcome, message: str) -> None:
    """End a run the sandbox never reported on (engine down, build failed, worker lost).

    Its error and its exit are stored and sent as one batch: both or neither, and a watcher
    renders them together (the exit's line then leaves the reason to the Error region).
    A run that has ended already is left as it ended: its first end wins (`run_record_events`),
    and an error told after it would contradict it (a worker's second try, say, after the
    answer to its first was lost).
    """
    if Run.objects.filter(pk=run_id, status__in=RunStatus.finished()).exists():
        return
    last = RunEvent.objects.filter(run_id=run_id).order_by("-seq").values_list("seq", flat=True)
    seq = (last.first() or 0) + 1
    now = timezone.now().timestamp()
    error = {"kind": outcome.value, "message": message}
    end = {"outcome": outcome.value, "message": message, "backend": ""}
    run_record_events(
        run_id=run_id,
        events=[
            {"seq": seq, "type": "error", "data": error, "ts": now},
            {"seq": seq + 1, "type": "exit", "data": end, "ts": now},
        ],
    )


def run_first_event_set(*, run_id: object, ms: float, warm: bool | None) -> None:
    """Record how long the sandbox took to its first event, and whether it was started already.

    Written after the first event (not with RUNNING, which the claim may store before a
    sandbox is picked), so neither delays it.
    """
    Run.objects.filter(pk=run_id).update(first_event_ms=ms, warm=warm)
