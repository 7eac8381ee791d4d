"""Reads for runs."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any

from django.db.models import QuerySet

from jazzmine.jsontext import json_read, json_shown
from jazzmine.visible import visible

from ..catalog.selectors import sandbox_for_user, sandboxes_for_user
from .models import RUN, Language, Run, RunEvent, RunStatus, status_shown


def runs_for_user(user: Any) -> QuerySet[Run]:
    """Return the runs in the sandboxes of the user's teams, newest first."""
    return Run.objects.filter(sandbox__in=sandboxes_for_user(user)).select_related(
        "sandbox", "sandbox__team", "created_by"
    )


def run_for_user(user: Any, run_id: Any) -> Run | None:
    """Return one run the user may see (its sandbox and team read with it), or None.

    Asked on every run page and follow, and once a second by every socket streaming a run:
    fixed-shape reads (`studio.hotrows`, `sandbox_for_user`) instead of the three-join queryset of
    `runs_for_user`, whose compiling cost 1.2 ms for a tenth of that in the database. The
    rule is the same: the run's sandbox belongs to a team where the user is a member.
    """
    run = RUN.get(run_id)  # text that is no UUID raises ValidationError, as the queryset does
    if run is None:
        return None
    sandbox = sandbox_for_user(user, run.sandbox_id)
    if sandbox is None:
        return None
    run.sandbox = sandbox
    return run


def run_events_after(run: Run | Any, after: int = 0) -> list[dict[str, Any]]:
    """Return the run's events with a sequence number above `after`, in order."""
    run_id = getattr(run, "pk", run)
    return [e.to_dict() for e in RunEvent.objects.filter(run_id=run_id, seq__gt=after)]


def run_history(
    user: Any, *, sandbox: str = "", status: str = "", source: str = ""
) -> QuerySet[Run]:
    """Return the user's runs, newest first, filtered by sandbox name, status and source."""
    runs = runs_for_user(user)
    if sandbox:
        runs = runs.filter(sandbox__name=sandbox)
    if status:
        runs = runs.filter(status=status)
    if source:
        runs = runs.filter(source=source)
    # The id breaks ties: runs created in the same instant keep their place across pages.
    return runs.order_by("-created_at", "-pk")


def run_state(run: Run) -> dict[str, Any]:
    """Return the JSON form of a run's state (for the API and the live page)."""
    return {
        "id": str(run.pk),
        "sandbox": run.sandbox.name,
        "status": run.status,
        "outcome": run.outcome,
        "message": run.message,
        "result": run.result,
        "error": run.error,
        "code_sha256": run.code_sha256,
        "backend": run.backend,
        "worker": run.worker,
        "warm": run.warm,
        "event_count": run.event_count,
        "created_at": run.created_at.isoformat(),
        "started_at": run.started_at.isoformat() if run.started_at else None,
        "finished_at": run.finished_at.isoformat() if run.finished_at else None,
        "first_event_ms": run.first_event_ms,
        "duration_ms": run.duration_ms,
        # What the run was refused as it was prepared: withheld secrets, tools that now need
        # a person's approval (a tool call refused for it says no more than that).
        "notes": list(run.notes),
    }


def run_status_outcome(*, run_id: Any) -> tuple[str, str]:
    """Return a run's status and outcome (a run deleted while it ran counts as failed)."""
    found = Run.objects.filter(pk=run_id).values_list("status", "outcome").first()
    return found or (RunStatus.FAILED, "")


# The run pane, as the page shows it. The first page load and the live socket render the same
# partials (templates/runs/_output.html) from these views, so a reload and a live page agree.


@dataclass(frozen=True)
class EventView:
    """One timeline or log line of a run's pane."""

    seq: int
    type: str
    ts: float
    since: str  # "+5 ms" from the run's creation (server clock, as event times are)
    label: str = ""
    text: str = ""
    outcome: str = ""


@dataclass(frozen=True)
class ResultView:
    """A run's result as a person reads it: a bash result is its stdout."""

    body: str
    format: str  # "json" or "text"
    meta: str = ""
    stderr: str = ""


@dataclass(frozen=True)
class RunHead:
    """The status region of a run's pane."""

    status: str
    label: str
    message: str
    # The badge's look (`status_shown`); `status` stays what pages' scripts read to know a
    # run ended.
    badge: str


@dataclass(frozen=True)
class PaneRegions:
    """What some events of a run add to its pane: lines, and the result or error they set."""

    timeline: list[EventView]
    logs: list[EventView]
    result: ResultView | None
    error: str | None


@dataclass(frozen=True)
class RunPane:
    """Everything the pane of one run shows, up to the event numbered `seq`."""

    run: Run
    seq: int
    regions: PaneRegions

    @property
    def head(self) -> RunHead:
        return run_head(status=self.run.status, message=self.run.message, outcome=self.run.outcome)

    @property
    def live(self) -> bool:
        """Whether the page should follow the run on its socket."""
        return self.run.status not in RunStatus.finished()


def run_pane(run: Run) -> RunPane:
    """Return the pane of a run with every event stored so far (read after the run's row)."""
    events = run_events_after(run)
    seq = events[-1]["seq"] if events else 0
    return RunPane(run=run, seq=seq, regions=pane_regions(run, events))


def run_pane_new(run: Run) -> RunPane:
    """Return the pane of a run just created, before any event (none is read)."""
    return RunPane(run=run, seq=0, regions=pane_regions(run, []))


def run_head(*, status: str, message: str, outcome: str = "") -> RunHead:
    """Return the status region for a status (a stored one, or one just announced)."""
    badge, label = status_shown(status, outcome)
    return RunHead(status=status, label=label, message=shown(message), badge=badge)


def pane_regions(run: Run, events: list[dict[str, Any]]) -> PaneRegions:
    """Return what these events of a run show, in order.

    An end the sandbox never reported (`services.run_fail`: a lost worker, an engine that
    went away) stores its reason as an error and again as the exit's message, in one batch:
    the Error region shows it, so the exit's line does not say it a second time.
    """
    started = run.created_at.timestamp()
    timeline: list[EventView] = []
    logs: list[EventView] = []
    result: ResultView | None = None
    error: str | None = None
    for event in events:
        view = event_view(event, started=started)
        told = view is not None and view.type == "exit" and view.text.strip()
        if told and error is not None and told == error.strip():
            view = dataclasses.replace(view, text="")
        if view is None:
            result, error = _region(event, run.language, result, error)
        elif view.type == "log":
            logs.append(view)
        else:
            timeline.append(view)
    return PaneRegions(timeline=timeline, logs=logs, result=result, error=error)


def event_view(event: dict[str, Any], *, started: float) -> EventView | None:
    """Return a timeline or log line for an event; None for a result or an error."""
    kind = event["type"]
    data = event.get("data")
    data = {} if data is None else data
    since = since_label(float(event["ts"]) - started)
    fields = {"seq": event["seq"], "type": kind, "ts": event["ts"], "since": since}
    if kind == "log":
        return EventView(**fields, text=pretty(_field(data, "message")))
    if kind == "intermediate":
        label = _field(data, "label", default="")
        return EventView(**fields, label=shown(str(label)), text=pretty(_field(data, "data")))
    if kind == "exit":
        outcome = str(_field(data, "outcome", default=""))
        message = data.get("message") if isinstance(data, dict) else None
        return EventView(**fields, label=shown(f"exit: {outcome}"),
                         text=shown(f" {message or ''}"), outcome=outcome)  # fmt: skip
    return None


OUTPUT_LOST = (
    "(no output shown: bashkit returns none of a script it stopped, so what it printed "
    "before the stop is lost)"
)


def result_view(data: Any, *, language: str) -> ResultView:
    """Return a result event's data as shown: JSON pretty-printed, a bash result as stdout."""
    is_bash = (
        language != Language.PYTHON
        and isinstance(data, dict)
        and isinstance(data.get("stdout"), str)
        and "exit_code" in data
    )
    if not is_bash:
        return ResultView(body=pretty(data), format="json")
    body = _json(data["json"]) if "json" in data else _pretty_stdout(data["stdout"])
    is_json = body is not None
    parts = ["stdout, as JSON" if is_json else "stdout", f"exit {data['exit_code']}"]
    if data.get("calls") is not None:
        parts.append(f"{data['calls']} tool call(s)")
    if isinstance(data.get("duration_ms"), int | float):
        parts.append(f"{_round(data['duration_ms'])} ms")
    empty = OUTPUT_LOST if data.get("output_lost") else "(no output)"
    return ResultView(
        body=shown(body if body is not None else (data["stdout"] or empty)),
        format="json" if is_json else "text",
        meta=" · ".join(parts),
        stderr=shown(str(data.get("stderr") or "")),
    )


def error_view(data: Any) -> str:
    """Return an error event's data as the pane shows it: message, then traceback."""
    if isinstance(data, dict):
        text = "\n\n".join(str(data[k]) for k in ("message", "traceback") if data.get(k))
        if text:
            return shown(text)
    return pretty(data)


def since_label(seconds: float) -> str:
    """Return "+5 ms" for the first second, then seconds: a 20 s timeout reads "+20.0 s"."""
    ms = max(0.0, seconds * 1000)
    if ms < 1000:
        return f"+{_round(ms)} ms"
    return f"+{ms / 1000:.{2 if ms < 10000 else 1}f} s"


# The most of one event's text a pane shows. A sandbox may write up to 50 MB: one log line
# of megabytes made a page of megabytes, and a socket frame over the 1 MiB daphne sends at most
# (the live pane's), which was never sent. The run's events keep all of it.
SHOWN_CHARS = 100_000


def pretty(data: Any) -> str:
    """Return text as it is, anything else as indented JSON, cut at `SHOWN_CHARS`."""
    return shown(data if isinstance(data, str) else _json(data))


def shown(text: str) -> str:
    """Return a text as a pane shows it: whole up to `SHOWN_CHARS`, else cut, saying so.

    Characters a page draws as nothing (bidi overrides, control characters) are written as
    their escapes (`jazzmine.visible`): what a person reads is what the run said.
    """
    text = visible(text)
    if len(text) <= SHOWN_CHARS:
        return text
    more = len(text) - SHOWN_CHARS
    return (
        f"{text[:SHOWN_CHARS]}\n… {more:,} more characters not shown here "
        "(the run's events keep them all: the API's event stream)"
    )


def _region(
    event: dict[str, Any], language: str, result: ResultView | None, error: str | None
) -> tuple[ResultView | None, str | None]:
    """Return the result and error regions after one more event (the last of each wins)."""
    data = event.get("data")
    if event["type"] == "result":  # `emit_result(None)` is a result of null, as the API says
        return result_view(data, language=language), error
    if event["type"] == "error":
        return result, error_view({} if data is None else data)
    return result, error


def _field(data: Any, name: str, *, default: Any = None) -> Any:
    # As `data.name ?? data` read it in the browser: a missing or null field shows the whole.
    if isinstance(data, dict) and data.get(name) is not None:
        return data[name]
    return data if default is None else default


def _pretty_stdout(text: str) -> str | None:
    """Return stdout pretty-printed when it is one JSON value, else None.

    A script's stdout may be any text: JSON nested past what Python's json reads or writes back
    (RecursionError), or a number too long for int(), is shown as the text it is.
    """
    if not text.strip():
        return None
    try:
        return _json(json_read(text))
    except (ValueError, RecursionError):
        return None


def _json(value: Any) -> str:
    return json_shown(value, indent=2)


def _round(value: float) -> int:
    return math.floor(value + 0.5)  # half up, as people round
