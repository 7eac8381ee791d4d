"""The agents' review API: submit a script, poll or wait for the decision, stream the run."""

from __future__ import annotations

import json
import logging
import re
import threading
import time
import weakref
from collections.abc import AsyncIterator
from typing import Any

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import DatabaseError
from django.http import HttpRequest, HttpResponse, JsonResponse, StreamingHttpResponse
from django.views.decorators.http import (
    require_GET,
    require_http_methods,
    require_POST,
    require_safe,
)

from jazzmine.jsontext import JSONTextError, json_read

from ..catalog.models import Sandbox
from ..catalog.selectors import sandboxes_for_user
from ..runs.selectors import run_events_after, run_state
from ..runs.services import run_group
from ..studio.db import released_connection
from ..studio.http import no_content
from ..studio.live import GroupWaiter
from ..studio.untrusted import id_number, nul_field, nul_message
from ..teams.auth import api_token_required, json_error, token_still_active
from ..teams.services import api_token_group
from . import selectors, services, webhooks
from .live import queue_group
from .models import Submission, SubmissionStatus

logger = logging.getLogger(__name__)

_DECIMAL = re.compile(r"[0-9]{1,9}(\.[0-9]{0,6})?", re.ASCII)
# Long requests wake on channel-layer messages; this is only the safety net for a lost one.
RECHECK_SECONDS = 5.0
PING_SECONDS = 15.0
# Waits and event streams one user may hold open at once in a web process, all tokens together
# (JAZZMINE_REVIEW_MAX_LONG_REQUESTS). Each holds a server thread for its whole life (Django runs
# a request's sync calls in a thread of its own) and a channel-layer subscription, for up to
# ten minutes: uncapped, one agent token opened them by the thousand and took the web
# process's threads from everyone. Per process, as the threads it guards are.


class _LongRequest:
    """One open wait or stream; its place is free once released, or once it is collected."""

    def __init__(self, places: _LongRequests, user_id: int) -> None:
        self._places = places
        self.user_id = user_id

    def release(self) -> None:
        self._places.release(self)


class _LongRequests:
    """The long requests each user holds open in this process.

    Held weakly besides the explicit release: a stream whose response is dropped before its
    first line (the client left at once) never runs its `finally`, and must not keep its
    place for good.
    """

    def __init__(self) -> None:
        self._open: dict[int, weakref.WeakSet[_LongRequest]] = {}
        self._lock = threading.Lock()

    def take(self, user_id: int, limit: int) -> _LongRequest | None:
        with self._lock:
            held = self._open.setdefault(user_id, weakref.WeakSet())
            if len(held) >= limit:
                return None
            place = _LongRequest(self, user_id)
            held.add(place)
            return place

    def release(self, place: _LongRequest) -> None:
        with self._lock:
            held = self._open.get(place.user_id)
            if held is None:
                return
            held.discard(place)
            if not held:
                del self._open[place.user_id]


LONG_REQUESTS = _LongRequests()


def _long_request_take(request: HttpRequest) -> _LongRequest | HttpResponse:
    """Return the request's place among its user's long requests, or the 429 refusing it."""
    limit = settings.JAZZMINE_REVIEW_MAX_LONG_REQUESTS
    place = LONG_REQUESTS.take(request.user.pk, limit)
    if place is not None:
        return place
    response = json_error(
        "too_many_requests",
        f"This user already holds {limit} waits or event streams open "
        "(all tokens together): close one, or let one end, before opening another.",
        status=429,
    )
    response["Retry-After"] = str(int(RECHECK_SECONDS))
    return response


def _json_body(
    request: HttpRequest, fields: frozenset[str] | None = None
) -> dict[str, Any] | HttpResponse:
    """Return a request's JSON object, or the answer that says what is wrong with it.

    Read strictly, since an agent's mistake answered with a guess runs a script: JSON alone
    (text/plain and XML were read as JSON), in UTF-8, each key once, and, given `fields`,
    none but those (`"lang": "bash"` ran the bash script as Python, refused as a syntax error
    that never named the typo). A request without a body is an empty object.
    """
    body = request.body
    charset = (request.content_params or {}).get("charset", "utf-8").lower()
    if body and not _is_json_type(request.content_type):
        # What `curl -d` sends unless told otherwise: say how to send the JSON it holds.
        return json_error(
            "unsupported_media_type",
            "The request body must be JSON, sent with Content-Type: application/json "
            f"(this one was sent as {request.content_type or 'no type'}).",
            status=415,
        )
    if body and charset not in ("utf-8", "utf8"):
        return json_error(
            "unsupported_media_type",
            f"The request body must be UTF-8 (this one says charset={charset}).",
            status=415,
        )
    try:
        data = json_read(body or b"{}", unique_keys=True)
    except JSONTextError as exc:
        return json_error("invalid_json", f"The request body is not usable: {exc}.", status=400)
    if not isinstance(data, dict):
        return json_error("invalid_json", "The request body must be a JSON object.", status=400)
    # Every field at once, before any is used: PostgreSQL can neither store nor look up text
    # with a NUL character (a sandbox's name, a task, a reason...).
    field = nul_field(data)
    if field is not None:
        return json_error("invalid_field", nul_message(field), status=400)
    unknown = sorted(set(data) - fields) if fields is not None else []
    if unknown:
        return json_error(
            "unknown_field",
            f"Unknown field(s) {', '.join(map(repr, unknown))}: this request takes "
            f"{', '.join(map(repr, sorted(fields)))}.",
            status=400,
        )
    return data


def _is_json_type(content_type: str) -> bool:
    """Tell whether a media type is JSON: application/json, or a `+json` one of its kind."""
    return content_type == "application/json" or (
        content_type.startswith("application/") and content_type.endswith("+json")
    )


# What a submission takes (`previous_id` is the older spelling of `previous`).
SUBMISSION_FIELDS = frozenset(
    {"sandbox", "task", "body", "prompt", "attempt", "previous", "previous_id", "language"}
)


def _error(exc: services.ReviewError) -> HttpResponse:
    response = json_error(exc.code, exc.message, status=exc.status)
    if isinstance(exc, services.EditRefused):
        payload = json.loads(response.content)
        payload["error"]["violations"] = exc.violations
        response = JsonResponse(payload, status=exc.status)
    return response


def _find_sandbox(request: HttpRequest, ref: object) -> Sandbox | HttpResponse:
    """Find a sandbox by id, "team/name" or a name unique among the user's teams."""
    visible = sandboxes_for_user(request.user)
    if ref is None or ref == "":
        return json_error(
            "missing_field", "'sandbox' is required (an id or 'team/name').", status=400
        )
    if isinstance(ref, bool) or not isinstance(ref, int | str):
        # JSON's true is no id either, though Python counts it as 1.
        return json_error("invalid_field", "'sandbox' must be an id or 'team/name'.", status=400)
    if isinstance(ref, int) or ref.isdigit():
        # Only an id a column can hold: "²", "①", 5000 digits or 10**20 name no sandbox.
        number = id_number(ref)
        found = visible.filter(pk=number).first() if number is not None else None
    elif "/" in ref:
        team, _, name = ref.partition("/")
        found = visible.filter(team__slug=team, name=name).first()
    else:
        matches = list(visible.filter(name=ref)[:2])
        if len(matches) > 1:
            return json_error(
                "ambiguous_sandbox",
                f"Several of your teams have {ref!r}; send 'team/name'.",
                status=400,
            )
        found = matches[0] if matches else None
    if found is None:
        return json_error("sandbox_not_found", f"No sandbox {ref!r} in your teams.", status=404)
    return found


@require_POST
@api_token_required
def submission_submit(request: HttpRequest) -> HttpResponse:
    """Submit a script: violations come back at once; otherwise it waits for review or runs."""
    data = _json_body(request, SUBMISSION_FIELDS)
    if isinstance(data, HttpResponse):
        return data
    if "previous" in data and "previous_id" in data:
        return json_error(
            "invalid_field", "Send 'previous' or 'previous_id', not both.", status=400
        )
    sandbox = _find_sandbox(request, data.get("sandbox"))
    if isinstance(sandbox, HttpResponse):
        return sandbox
    try:
        submission = services.submission_create(
            sandbox=sandbox,
            user=request.user,
            token=request.api_token,  # type: ignore[attr-defined]
            task=data.get("task"),
            body=data.get("body"),
            prompt=data.get("prompt"),
            attempt=data.get("attempt"),
            # As sent: false, 0, "" or {} are no submission's id nor a language, and are
            # refused saying so (they were taken for "none" and "python"); null is "not given".
            previous_id=data.get("previous", data.get("previous_id")),
            user_agent=request.headers.get("User-Agent", ""),
            language="python" if data.get("language") is None else data["language"],
        )
    except services.ReviewError as exc:
        return _error(exc)
    fresh = selectors.submission_for_user(request.user, submission.pk)
    if fresh is None:  # stored, but its user left the sandbox's team meanwhile
        return _not_found(submission.pk)
    return JsonResponse(selectors.submission_state(fresh), status=201)


def _visible(user: Any, submission_id: Any) -> Submission | None:
    """Return a submission the user may see, expired first when overdue."""
    found = selectors.submission_for_user(user, submission_id)
    return services.submission_refresh(submission=found) if found is not None else None


def _not_found(submission_id: Any) -> HttpResponse:
    return json_error(
        "submission_not_found", f"No submission {submission_id} in your teams.", status=404
    )


@require_safe  # GET, and HEAD as HTTP asks of every GET
@api_token_required
def submission_status(request: HttpRequest, submission_id: Any) -> HttpResponse:
    """Return a submission's status, decision and run."""
    submission = _visible(request.user, submission_id)
    if submission is None:
        return _not_found(submission_id)
    return JsonResponse(selectors.submission_state(submission))


@require_POST
@api_token_required
def submission_withdraw(request: HttpRequest, submission_id: Any) -> HttpResponse:
    """Take back a submission still waiting for review (optional JSON: `reason`)."""
    submission = _visible(request.user, submission_id)
    if submission is None:
        return _not_found(submission_id)
    data = _json_body(request, frozenset({"reason"}))
    if isinstance(data, HttpResponse):
        return data
    try:
        withdrawn = services.submission_withdraw(
            submission=submission,
            user=request.user,
            token=request.api_token,
            reason=data.get("reason", ""),
        )
    except services.ReviewError as exc:
        return _error(exc)
    return JsonResponse(selectors.submission_state(withdrawn))


@require_POST
@api_token_required
def submission_cancel(request: HttpRequest, submission_id: Any) -> HttpResponse:
    """Stop a submission's run (queued or running); answer its state and whether it was live."""
    submission = _visible(request.user, submission_id)
    if submission is None:
        return _not_found(submission_id)
    try:
        stopped = services.submission_run_cancel(
            submission=submission, user=request.user, token=request.api_token
        )
    except services.ReviewError as exc:
        return _error(exc)
    fresh = selectors.submission_for_user(request.user, submission.pk)
    if fresh is None:  # its user left the sandbox's team meanwhile
        return _not_found(submission.pk)
    return JsonResponse(
        {**selectors.submission_state(fresh), "cancelled": stopped}, status=202 if stopped else 200
    )


def _number(request: HttpRequest, name: str, default: float) -> float | HttpResponse:
    raw = request.GET.get(name)
    if raw is None or raw == "":
        return default
    # Plain ASCII decimals only: float() would also take "inf", "1e309", "1_0" and other
    # scripts' digits, none of which a client means by a number of seconds or events.
    if not _DECIMAL.fullmatch(raw):
        return json_error(
            "invalid_field", f"'{name}' must be a plain number, zero or more.", status=400
        )
    return float(raw)


def _revoked() -> HttpResponse:
    return json_error(
        "token_revoked", "The API token was revoked while the request waited.", status=401
    )


@released_connection
def _wait_snapshot(
    user: Any, submission_id: Any, until: str, token_id: int
) -> tuple[dict[str, Any], bool, list[str]] | HttpResponse | None:
    if not token_still_active(token_id):
        return _revoked()
    submission = _visible(user, submission_id)
    if submission is None:
        return None
    state = selectors.submission_state(submission)
    done = state["decided"] if until == "decided" else state["final"]
    return state, done, [*_watched_groups(submission), api_token_group(token_id)]


def _watched_groups(submission: Submission) -> list[str]:
    """Return the groups that hear of a submission's changes: its team's queue and its run."""
    groups = [queue_group(submission.sandbox.team_id)]
    if submission.run_id is not None:
        groups.append(run_group(submission.run_id))
    return groups


# GET only: a HEAD would hold a long request open for headers alone.
@require_GET
@api_token_required
async def submission_wait(request: HttpRequest, submission_id: Any) -> HttpResponse:
    """Long-poll: answer when the submission is decided or final, or when `timeout` runs out."""
    timeout = _number(request, "timeout", 30.0)
    if isinstance(timeout, HttpResponse):
        return timeout
    timeout = min(timeout, settings.JAZZMINE_REVIEW_MAX_WAIT_SECONDS)
    until = request.GET.get("until", "final")
    if until not in ("final", "decided"):
        return json_error("invalid_field", "'until' must be 'final' or 'decided'.", status=400)
    place = _long_request_take(request)
    if isinstance(place, HttpResponse):
        return place
    try:
        return await _wait(request, submission_id, until, time.monotonic() + timeout)
    finally:
        place.release()


async def _wait(
    request: HttpRequest, submission_id: Any, until: str, deadline: float
) -> HttpResponse:
    # Each look at the database is short, outside any transaction, and gives its connection
    # back; between looks the request sleeps until its submission's groups hear of a change.
    async with GroupWaiter() as waiter:
        while True:
            snapshot = await sync_to_async(_wait_snapshot)(
                request.user, submission_id, until, request.api_token.pk
            )
            if isinstance(snapshot, HttpResponse):
                return snapshot
            if snapshot is None:
                return _not_found(submission_id)
            state, done, groups = snapshot
            if done or time.monotonic() >= deadline:
                return JsonResponse({**state, "timed_out": not done})
            await waiter.join(groups)
            await waiter.wait(min(RECHECK_SECONDS, max(0.0, deadline - time.monotonic())))


_TOKEN_REVOKED = "revoked"


@released_connection
def _stream_snapshot(
    user: Any, submission_id: Any, after: int, token_id: int | None = None
) -> tuple[dict[str, Any], dict[str, Any] | None, list[dict[str, Any]], list[str]] | str | None:
    if token_id is not None and not token_still_active(token_id):
        return _TOKEN_REVOKED
    submission = _visible(user, submission_id)
    if submission is None:
        return None
    head = {
        "type": "submission",
        "id": str(submission.pk),
        "status": submission.status,
        "decided": submission.status != SubmissionStatus.PENDING,
        "final": selectors.submission_is_final(submission),
        "previous_error": selectors.submission_retry_error(submission),
    }
    run = submission.run
    # The state is read before the events: a run seen finished has every event stored already.
    state = run_state(run) if run is not None else None
    events = run_events_after(run, after) if run is not None else []
    groups = _watched_groups(submission)
    if token_id is not None:
        groups.append(api_token_group(token_id))
    return head, state, events, groups


def _line(payload: dict[str, Any]) -> bytes:
    return (json.dumps(payload, default=str) + "\n").encode()


async def _event_lines(
    user: Any, submission_id: Any, *, after: int, token_id: int, place: _LongRequest
) -> AsyncIterator[bytes]:
    deadline = time.monotonic() + settings.JAZZMINE_REVIEW_MAX_STREAM_SECONDS
    try:
        async with GroupWaiter() as waiter:
            async for line in _stream_turns(
                waiter, user, submission_id, sent=after, token_id=token_id, deadline=deadline
            ):
                yield line
    finally:
        place.release()


async def _stream_turns(
    waiter: GroupWaiter,
    user: Any,
    submission_id: Any,
    *,
    sent: int,
    token_id: int,
    deadline: float,
) -> AsyncIterator[bytes]:
    last_head: dict[str, Any] | None = None
    last_run: tuple[str, int] | None = None
    last_write = time.monotonic()
    while True:
        # The token is checked on every turn: revoking it ends a stream already open.
        try:
            snapshot = await sync_to_async(_stream_snapshot)(user, submission_id, sent, token_id)
        except DatabaseError as exc:
            # The database stopped answering (a restart, a failover). The answer's status is
            # sent already: an error can only be a last line, and without one the agent waits
            # on a stream that says nothing again. It says where to open the next one.
            logger.warning("event stream of %s ended: %s", submission_id, exc)
            yield _line(
                {
                    "type": "end",
                    "final": False,
                    "reason": "unavailable",
                    "after": sent,
                    "message": "The database did not answer; the stream ends. "
                    f"Open it again with after={sent} to go on where it stopped.",
                }
            )
            return
        if snapshot == _TOKEN_REVOKED:
            yield _line(
                {
                    "type": "end",
                    "final": False,
                    "reason": "token_revoked",
                    "message": "The API token was revoked; the stream ends.",
                }
            )
            return
        if snapshot is None or isinstance(snapshot, str):
            return
        head, state, events, groups = snapshot
        if head != last_head:
            last_head = head
            yield _line(head)
            last_write = time.monotonic()
        for event in events:
            if event["seq"] > sent:
                sent = event["seq"]
                yield _line({"type": "event", "event": event})
                last_write = time.monotonic()
        if state is not None and (state["status"], state["event_count"]) != last_run:
            last_run = (state["status"], state["event_count"])
            yield _line({"type": "run", **state})
            last_write = time.monotonic()
        if head["final"]:
            yield _line({"type": "end", "status": head["status"], "final": True})
            return
        if time.monotonic() >= deadline:
            yield _line(
                {"type": "end", "status": head["status"], "final": False, "timed_out": True}
            )
            return
        if time.monotonic() - last_write >= PING_SECONDS:
            yield _line({"type": "ping"})
            last_write = time.monotonic()
        await waiter.join(groups)
        until_ping = PING_SECONDS - (time.monotonic() - last_write)
        await waiter.wait(max(0.0, min(RECHECK_SECONDS, until_ping, deadline - time.monotonic())))


@require_GET
@api_token_required
async def submission_events(request: HttpRequest, submission_id: Any) -> HttpResponse:
    """Stream NDJSON: the submission's status, then its run's events (stored, then live)."""
    after = _number(request, "after", 0)
    if isinstance(after, HttpResponse):
        return after
    # Whether it may be seen, not its run's events: a stream refused past the cap below must
    # cost no read of a whole run (up to JAZZMINE_MAX_RUN_EVENTS rows), as many times as asked.
    if await sync_to_async(_visible)(request.user, submission_id) is None:
        return _not_found(submission_id)
    place = _long_request_take(request)
    if isinstance(place, HttpResponse):
        return place
    # Released when the stream ends, or when its response is dropped unread (`_LongRequests`).
    lines = _event_lines(
        request.user, submission_id, after=int(after), token_id=request.api_token.pk, place=place
    )
    response = StreamingHttpResponse(lines, content_type="application/x-ndjson")
    response["Cache-Control"] = "no-cache"
    response["X-Accel-Buffering"] = "no"  # a proxy in front must not hold lines back
    return response


def _delivery_json(delivery: Any) -> dict[str, Any]:
    return {
        "id": delivery.pk,
        "event": delivery.event,
        "url": delivery.url,
        "status": delivery.status,
        "cancel_reason": delivery.cancel_reason or None,  # why a cancelled one was never sent
        "submission_id": str(delivery.submission_id) if delivery.submission_id else None,
        "created_at": delivery.created_at.isoformat(),
        "delivered_at": delivery.delivered_at.isoformat() if delivery.delivered_at else None,
        "attempts": [
            {
                "number": a.number,
                "started_at": a.started_at.isoformat(),
                "status_code": a.status_code,
                "error": a.error,
                "duration_ms": a.duration_ms,
            }
            for a in delivery.attempts.all()
        ],
    }


@require_http_methods(["GET", "PUT", "POST", "DELETE"])
@api_token_required
def webhook(request: HttpRequest) -> HttpResponse:
    """Show, set (PUT/POST {"url"}; the signing secret is returned once) or remove this token's webhook."""
    token = request.api_token  # type: ignore[attr-defined]
    if request.method == "DELETE":
        webhooks.webhook_clear(token=token)
        return no_content()
    if request.method in ("PUT", "POST"):
        data = _json_body(request, frozenset({"url"}))
        if isinstance(data, HttpResponse):
            return data
        try:
            endpoint, secret = webhooks.webhook_set(token=token, url=data.get("url"))
        except services.ReviewError as exc:
            return _error(exc)
        return JsonResponse({"url": endpoint.url, "active": endpoint.active, "secret": secret})
    endpoint = selectors.webhook_for_token(token)
    return JsonResponse(
        {
            "url": endpoint.url if endpoint else None,
            "active": endpoint.active if endpoint else False,
            "deliveries": [
                _delivery_json(d) for d in selectors.webhook_deliveries_for_token(token)
            ],
        }
    )
