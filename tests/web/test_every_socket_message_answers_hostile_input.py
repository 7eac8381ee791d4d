"""Every websocket of the site, sent what an attacker sends, answers an error and goes on, or
closes with a proper code: never an unhandled exception in its consumer (which the server
answers with a 1011 close, or a 500 to the handshake, and a traceback in its log). Another
team's rows, named by their real ids, are neither sent back nor changed: for a visitor signed
out, a member and a team admin.

The socket counterpart of `test_every_path_answers_hostile_ids_without_a_server_error`. The
sockets are read from the routing, the playground's message types from its consumer's table of
them and the fields from what its code reads, so a socket, a message type or a field added
later is swept too. Each field gets numbers past what a column holds, values that are no
number at all, long text, NUL characters and lone surrogates (JSON's escapes carry them; the
server refuses a text frame that is not UTF-8, with 1007, before any consumer sees it); each
socket gets frames that are no JSON, binary, empty, nested past what a parser follows, JSON
that is not an object, and objects without a type or of a type no handler has.
"""

from __future__ import annotations

import asyncio
import gc
import inspect
import itertools
import json
import re
import time
from asyncio import FIRST_COMPLETED
from collections.abc import AsyncIterator
from typing import Any

import pytest
from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer, AsyncWebsocketConsumer
from channels.testing import WebsocketCommunicator
from django.contrib.auth import get_user_model
from django.contrib.sessions.models import Session
from django.urls.converters import IntConverter, UUIDConverter

from jazzmine_web import routing
from jazzmine_web.asgi import application
from jazzmine_web.catalog.models import ImageBuild, Sandbox, Tool
from jazzmine_web.catalog.services import image_build_append_line, image_build_start
from jazzmine_web.playground import consumers as playground_consumers
from jazzmine_web.playground.consumers import PlaygroundConsumer
from jazzmine_web.playground.models import Attempt, AttemptSource, PlaygroundSession
from jazzmine_web.playground.services import attempt_record
from jazzmine_web.reviews.models import Submission
from jazzmine_web.reviews.services import submission_create
from jazzmine_web.runs.models import Run, RunEvent
from jazzmine_web.runs.services import run_create, run_record_event
from jazzmine_web.studio import session_bound
from jazzmine_web.teams.models import ApiToken
from jazzmine_web.teams.services import api_token_create
from tests.web.helpers import rival_team, ws_headers

pytestmark = pytest.mark.django_db(transaction=True)

MARK = "RIVAL-7731-not-for-you"
# What a field of a message may hold besides what the page sends: numbers past a 64-bit column
# or none a count takes, digits Python reads and an id is not, other JSON kinds, long text, and
# the characters text here cannot store (NUL: PostgreSQL; a lone surrogate: UTF-8 itself).
VALUES: tuple[Any, ...] = (
    99999999999999999999, 2**63, 2**63 - 1, -1, 0, 1e9, 1.5, True, False, None, [1], {"id": 1},
    [[[[[[[[1]]]]]]]], "99999999999999999999", "-1", "\u00b2", "1_0", " 7", "", "x" * 3000,
    "\u0000", "\ud800", "a\udfffb", "00000000-0000-0000-0000-000000000000",
)  # fmt: skip
# Whole frames, whatever the socket: no JSON, half of it, JSON that is no object, nesting past
# what a parser follows (and just within it, for whoever walks the result), objects without a
# type or of a type no handler has (the names of the consumer's own attributes among them),
# an empty text frame and binary ones (browsers send both).
FRAMES: tuple[str | bytes, ...] = (
    "not json", "{", '{"type": "validate",', "[]", "[1, 2]", "1", '"validate"', "null", "true",
    "1e999", "NaN", "[" * 100_000 + "]" * 100_000, '{"a": ' * 100_000,
    '{"type": "validate", "body": ' + "[" * 40 + "]" * 40 + "}",
    *('{"type": "run", "task": ' + '{"a": ' * n + "1" + "}" * n + "}" for n in (960, 990)),
    "{}", '{"type": null}', '{"type": []}', '{"type": {}}', '{"type": ["validate"]}',
    '{"type": 1}', '{"type": "' + "x" * 3000 + '"}', '{"type": "VALIDATE"}', '{"type": " run"}',
    '{"type": "receive_json"}', '{"type": "__class__"}', '{"type": "close"}',
    '{"type": "follow_run"}', '{"type": "\\ud800"}', '{"type": "\\u0000"}', '{"type": "unknown"}',
    "", b"", b"\x00\xff\xfe", b'{"type": "cancel"}', b"\xed\xa0\x80",
)  # fmt: skip
# What each path parameter's converter lets through but no row has, and what it refuses.
PATH_VALUES: dict[type, tuple[str, ...]] = {
    IntConverter: (
        "0", "2147483648", "9223372036854775808", "99999999999999999999999999",
        "00000000000000000000000001", "-1", "\u00b2", "1_0", "%20" + "7", "x" * 3000, "%00",
    ),
    UUIDConverter: (
        "00000000-0000-0000-0000-000000000000", "ffffffff-ffff-ffff-ffff-ffffffffffff",
        "FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF", "not-a-uuid", "%00",
    ),
}  # fmt: skip
# The query fields the sockets read (a run page's last event, the queue's filters, the badge
# and one review), each given every value below at once.
QUERY_FIELDS = ("after", "sandbox", "age", "badge", "submission")
QUERY_VALUES = (
    "99999999999999999999", "9223372036854775808", "-1", "%C2%B2", "1_0", "%207", "1e9",
    "x" * 3000, "%00", "%ED%A0%80", "%FF", "00000000-0000-0000-0000-000000000000",
)  # fmt: skip
# What a socket may close with: the app's own codes (not signed in, not found), a normal or a
# policy close, data it cannot take. Never 1011, the server's answer to an exception.
PROPER_CLOSE_CODES = {1000, 1003, 1007, 1008, 1009, 4401, 4403, 4404}
PARAMETER = re.compile(r"<(?:\w+:)?(\w+)>")
# A script the checks refuse: a "run" of it stores an attempt and queues no run.
REFUSED = "import os\n"


# --- What the sweep reads from the code ---------------------------------------------------


def _sockets() -> list[tuple[str, dict[str, Any], type]]:
    """Return each websocket route, its converters and its consumer class."""
    return [
        (str(entry.pattern), entry.pattern.converters, entry.callback.consumer_class)
        for entry in routing.websocket_urlpatterns
    ]


def _reads_frames(consumer: Any) -> bool:
    """Tell whether a consumer does anything with what the browser sends."""
    return (
        consumer.receive is not AsyncWebsocketConsumer.receive
        and consumer.receive is not AsyncJsonWebsocketConsumer.receive
    ) or getattr(consumer, "receive_json", None) not in (
        None,
        AsyncJsonWebsocketConsumer.receive_json,
    )


def _message_fields() -> list[str]:
    """Return every field of a message the playground's consumer reads, whatever its type."""
    source = inspect.getsource(playground_consumers)
    found = set(re.findall(r"""content(?:\.get\(|\[)["'](\w+)["']""", source))
    return sorted(found - {"type"})


def test_the_sweep_sees_every_socket_message_and_field() -> None:
    sockets = _sockets()
    assert {route for route, _c, _k in sockets} == {
        "ws/builds/<int:build_id>/", "ws/runs/<uuid:run_id>/", "ws/playground/",
        "ws/reviews/queue/",
    }  # fmt: skip
    # Only the playground reads what a page sends: a consumer that starts to must get a table
    # of its messages, and a place here, before it ships.
    assert {consumer for _r, _c, consumer in sockets if _reads_frames(consumer)} == {
        PlaygroundConsumer
    }
    for kind in PlaygroundConsumer.MESSAGES:
        assert inspect.iscoroutinefunction(getattr(PlaygroundConsumer, kind)), kind
    assert set(_message_fields()) >= {
        "sandbox", "body", "version", "task", "session", "attempt_id", "run_id", "after",
        "max_attempts", "language", "retry",
    }  # fmt: skip


# --- Fixtures -----------------------------------------------------------------------------


@pytest.fixture
async def raised() -> AsyncIterator[list[str]]:
    """Collect exceptions no one awaited: a task of a consumer that died unseen (a check)."""
    found: list[str] = []
    loop = asyncio.get_running_loop()
    loop.set_exception_handler(lambda _loop, context: found.append(str(context)[:300]))
    yield found
    loop.set_exception_handler(None)


@pytest.fixture
def own(ecommerce, member):
    """The member's own rows a socket follows: a build, a queued run, a token to submit with."""
    build = image_build_start(sandbox=ecommerce, user=member, background=False)
    image_build_append_line(build_id=build.pk, line="building")
    return {
        "user": member,
        "sandbox": ecommerce,
        "build": build,
        "run": run_create(sandbox=ecommerce, user=member, body="emit_result(1)\n", start=False),
        "token": api_token_create(user=member, name="sweep").token,
    }


@pytest.fixture
def rival():
    """Another team, with a row of every kind a socket or a message names, each carrying MARK."""
    _team, rex, sandbox, token = rival_team(MARK)
    body = "emit_result('theirs')\n"  # MARK's elsewhere: a run of this changes their rows
    run = run_create(sandbox=sandbox, user=rex, body=body, task=MARK, start=False)
    event = {"seq": 1, "type": "log", "data": {"message": MARK}, "ts": time.time()}
    run_record_event(run_id=run.pk, event=event)
    build = image_build_start(sandbox=sandbox, user=rex, background=False)
    image_build_append_line(build_id=build.pk, line=MARK)
    session = PlaygroundSession.objects.create(user=rex, sandbox=sandbox, task=MARK)
    attempt = attempt_record(session=session, source=AttemptSource.HUMAN, body=body)
    return {
        "user": rex,
        "sandbox": sandbox,
        "run": run,
        "build": build,
        "session": session,
        "attempt": attempt,
        "submission": submission_create(
            sandbox=sandbox, user=rex, token=token, task=MARK, body=body
        ),
        "token": token,
    }


def _state(rival: dict[str, Any]) -> dict[str, Any]:
    """Return every row of the rival's, field by field (and how many of each its sandbox has)."""

    def rows(model: Any, **lookup: Any) -> list[dict[str, Any]]:
        found = model.objects.filter(**lookup).order_by("pk").values()
        return [{k: v for k, v in row.items() if k != "last_used_at"} for row in found]

    sandbox = rival["sandbox"]
    return {
        "sandbox": rows(Sandbox, pk=sandbox.pk),
        "tools": rows(Tool, sandbox=sandbox),
        "runs": rows(Run, sandbox=sandbox),
        "events": rows(RunEvent, run__sandbox=sandbox),
        "builds": rows(ImageBuild, sandbox=sandbox),
        "sessions": rows(PlaygroundSession, sandbox=sandbox),
        "attempts": rows(Attempt, session__sandbox=sandbox),
        "submissions": rows(Submission, sandbox=sandbox),
        "token": rows(ApiToken, pk=rival["token"].pk),
    }


# --- Sockets ------------------------------------------------------------------------------


async def _open(path: str, user: Any) -> tuple[WebsocketCommunicator, bool, Any]:
    """Open a socket as the user's browser (None: signed out); return it, and how it went."""
    if user is None:
        headers = [(b"origin", b"http://localhost")]
    else:
        headers = await database_sync_to_async(ws_headers)(user)
    ws = WebsocketCommunicator(application, path, headers=headers)
    await ws.send_input({"type": "websocket.connect"})
    answer = await _output(ws, timeout=10)
    if answer["type"] == "websocket.close":
        return ws, False, answer.get("code", 1000)
    assert answer["type"] == "websocket.accept", answer
    return ws, True, None


async def _frames_until(
    ws: WebsocketCommunicator, done: Any, timeout: float = 10
) -> tuple[list[str], int | None]:
    """Return the frames the socket sends up to the one `done` accepts, or up to its close."""
    frames: list[str] = []
    while True:
        sent = await _output(ws, timeout)
        if sent["type"] == "websocket.close":
            return frames, sent.get("code", 1000)
        frame = sent.get("text") or sent.get("bytes", b"").decode(errors="replace")
        frames.append(frame)
        if done(frame):
            return frames, None


async def _output(ws: WebsocketCommunicator, timeout: float) -> dict[str, Any]:
    """Return what the socket sends next; raise what its consumer raised as soon as it does.

    The communicator's own receive notices a dead consumer only once its wait is over.
    """
    getter = asyncio.ensure_future(ws.output_queue.get())
    await asyncio.wait({getter, ws.future}, timeout=timeout, return_when=FIRST_COMPLETED)
    if getter.done():
        return getter.result()
    getter.cancel()
    if ws.future.done():
        ws.future.result()  # the consumer's exception
        raise AssertionError("the consumer returned without closing the socket")
    raise TimeoutError(f"nothing sent in {timeout} s")


async def _first_frames(ws: WebsocketCommunicator, path: str) -> list[str]:
    """Return what a socket just opened sends first: what the page has now (the playground's
    socket says nothing until asked)."""
    if path.startswith("/ws/playground/"):
        return []
    frames, _closed = await _frames_until(ws, lambda _frame: True)
    return frames


async def _send(ws: WebsocketCommunicator, frame: str | bytes) -> None:
    # The communicator's own send refuses an empty frame; a browser sends one.
    key = "bytes" if isinstance(frame, bytes) else "text"
    await ws.send_input({"type": "websocket.receive", key: frame})


def _problems(frames: list[str], closed: int | None) -> list[str]:
    """Return what is wrong with a socket's answer: a leak, a close that is no proper one, an
    error that says nothing."""
    problems = []
    if any(MARK in frame for frame in frames):
        problems.append("sent another team's text")
    if closed is not None and closed not in PROPER_CLOSE_CODES:
        problems.append(f"closed with {closed}")
    for frame in frames:
        if frame.startswith("{"):
            answer = json.loads(frame)
            if answer.get("type") == "error" and not str(answer.get("message", "")).strip():
                problems.append(f"an error without a message: {frame[:100]}")
    return problems


class Playground:
    """A playground socket that sends one message at a time, and opens again after a close."""

    def __init__(self, user: Any, sandbox: Sandbox) -> None:
        self.user, self.sandbox = user, sandbox
        self.ws: WebsocketCommunicator | None = None
        self.probes = itertools.count(10**12)  # versions no hostile message spells

    async def answer(self, frame: str | bytes) -> tuple[list[str], int | None]:
        """Send a frame, then a script to check; return what came back before that check's
        answer, and the close code if the socket closed instead. Raises what the consumer did."""
        if self.ws is None:
            self.ws, connected, _ = await _open("/ws/playground/", self.user)
            assert connected
        ws = self.ws
        await _send(ws, frame)
        version = next(self.probes)
        probe = {"type": "validate", "sandbox": self.sandbox.pk, "body": "x = 1",
                 "version": version}  # fmt: skip
        try:
            await ws.send_json_to(probe)
            frames, closed = await _frames_until(ws, lambda f: f'"version": {version}' in f)
        except BaseException:
            self.ws = None
            raise
        if closed is not None:
            self.ws = None
            await ws.disconnect()
        return frames[:-1] if closed is None else frames, closed

    async def close(self) -> None:
        if self.ws is not None:
            await self.ws.disconnect()


async def _sweep(
    socket: Playground, frames: list[tuple[str, str | bytes]], *, refused: bool = False
) -> list[str]:
    """Send each frame; return what went wrong with each, named (with `refused`, also each
    that is not answered with an error)."""
    failures = []
    for name, frame in frames:
        try:
            answers, closed = await socket.answer(frame)
        except Exception as exc:  # raised by the consumer: the server's 1011, a traceback
            failures.append(f"{name}: raised {exc!r}"[:300])
            continue
        failures += [f"{name}: {problem}"[:300] for problem in _problems(answers, closed)]
        if refused and closed is None and not any('"type": "error"' in a for a in answers):
            failures.append(f"{name}: answered {answers!r}, no error"[:300])
    return failures


def _named(message: dict[str, Any], field: str | None = None) -> str:
    shown = json.dumps(message.get(field) if field else message)
    return f"{message['type']} {field or ''}={shown[:40]}"


# --- The playground: every message, every field -------------------------------------------


@pytest.mark.parametrize("role", ["member", "team admin"])
async def test_every_message_with_hostile_fields_is_answered(
    own, member, team_admin, role, raised
) -> None:
    sandbox = own["sandbox"]
    base = {"sandbox": sandbox.pk, "task": "Count the orders", "body": REFUSED}
    frames = [
        (_named(message, field), json.dumps(message))
        for kind in PlaygroundConsumer.MESSAGES
        for field in _message_fields()
        for value in VALUES
        for message in [{**base, "type": kind, field: value}]
    ]
    socket = Playground(member if role == "member" else team_admin, sandbox)
    try:
        failures = await _sweep(socket, frames)
    finally:
        await socket.close()
    gc.collect()  # a task that died unawaited reports as it goes
    failures += raised
    assert not failures, "\n".join(failures[:60])


@pytest.mark.parametrize("role", ["member", "team admin"])
async def test_every_hostile_frame_is_answered(own, member, team_admin, role, raised) -> None:
    socket = Playground(member if role == "member" else team_admin, own["sandbox"])
    try:
        failures = await _sweep(socket, [(repr(f)[:60], f) for f in FRAMES], refused=True)
    finally:
        await socket.close()
    gc.collect()
    failures += raised
    assert not failures, "\n".join(failures[:60])


# --- The sockets that only stream: frames change nothing, the stream goes on ---------------


def _streams(own: dict[str, Any]) -> dict[str, Any]:
    """Return each streaming socket's path, and what makes it send a frame that says `still`."""

    def line() -> None:
        image_build_append_line(build_id=own["build"].pk, line="still")

    def event() -> None:
        data = {"message": "still"}
        run_record_event(run_id=own["run"].pk, event={"seq": 1, "type": "log", "data": data,
                                                      "ts": time.time()})  # fmt: skip

    def submission() -> None:
        submission_create(sandbox=own["sandbox"], user=own["user"], token=own["token"],
                          task="still", body="emit_result(1)\n")  # fmt: skip

    return {
        f"/ws/builds/{own['build'].pk}/": line,
        f"/ws/runs/{own['run'].pk}/": event,
        "/ws/reviews/queue/": submission,
    }


async def test_a_streaming_socket_ignores_what_it_is_sent_and_goes_on(own, member, raised):
    paths = _streams(own)
    routes = {route for route, _c, consumer in _sockets() if not _reads_frames(consumer)}
    assert len(paths) == len(routes)  # one stream per socket that reads nothing
    failures = []
    for path, still in paths.items():
        ws, connected, _ = await _open(path, member)
        assert connected, path
        try:
            await _first_frames(ws, path)
            for frame in FRAMES:
                await _send(ws, frame)
            await database_sync_to_async(still)()
            frames, closed = await _frames_until(ws, lambda f: "still" in f)
            failures += [f"{path}: {p}" for p in _problems(frames, closed)]
            if closed is not None:
                failures.append(f"{path}: closed ({closed}) instead of streaming on")
        except Exception as exc:
            failures.append(f"{path}: raised {exc!r}"[:300])
        finally:
            await ws.disconnect()
    gc.collect()
    failures += raised
    assert not failures, "\n".join(failures[:60])


# --- Paths and queries ----------------------------------------------------------------------


def _fill(route: str, values: dict[str, str]) -> str:
    return "/" + PARAMETER.sub(lambda m: values[m.group(1)], route)


def _hostile_paths(own: dict[str, Any]) -> list[str]:
    """Every socket with each hostile path value, and with its own rows and hostile queries."""
    paths = []
    real = {"build_id": str(own["build"].pk), "run_id": str(own["run"].pk)}
    for route, converters, _consumer in _sockets():
        for name, converter in converters.items():
            paths += [_fill(route, {name: value}) for value in PATH_VALUES[type(converter)]]
        for value in QUERY_VALUES:
            query = "&".join(f"{field}={value}" for field in QUERY_FIELDS)
            paths.append(f"{_fill(route, real)}?{query}")
    paths += ["/ws/", "/ws/builds/", "/ws/nothing/", "/ws/playground/x/", "/" + "x" * 3000]
    return paths


@pytest.mark.parametrize("role", ["signed out", "member"])
async def test_every_socket_path_and_query_opens_or_is_refused(own, member, role, raised):
    failures = []
    for path in _hostile_paths(own):
        try:
            ws, connected, detail = await _open(path, member if role == "member" else None)
            try:
                if connected:
                    await _first_frames(ws, path)
                elif detail not in PROPER_CLOSE_CODES:
                    failures.append(f"{path[:90]}: refused with {detail}")
                if connected and role == "signed out":
                    failures.append(f"{path[:90]}: open to a visitor signed out")
            finally:
                await ws.disconnect()
        except Exception as exc:
            failures.append(f"{path[:90]}: raised {exc!r}"[:300])
    gc.collect()
    failures += raised
    assert not failures, "\n".join(failures[:60])


async def test_a_socket_whose_login_ended_closes_at_its_next_frame(own, member, monkeypatch):
    monkeypatch.setattr(session_bound, "SIGNED_IN_RECHECK_SECONDS", 0.0)
    failures = []
    for path in [*_streams(own), "/ws/playground/"]:
        ws, connected, _ = await _open(path, member)
        assert connected, path
        try:
            await database_sync_to_async(Session.objects.all().delete)()  # signed out elsewhere
            for frame in FRAMES:
                await _send(ws, frame)
            _frames, closed = await _frames_until(ws, lambda f: False)
            if closed not in (4403, 4404):
                failures.append(f"{path}: closed with {closed}")
            assert await ws.receive_nothing(timeout=0.1)
        except Exception as exc:
            failures.append(f"{path}: raised {exc!r}"[:300])
        finally:
            await ws.disconnect()
    assert not failures, "\n".join(failures)


# --- Another team's rows, by their real ids -----------------------------------------------


def _rival_messages(rival: dict[str, Any], sandbox: Sandbox) -> list[tuple[str, str]]:
    """Every message type with the rival's ids in each field that names a row, as int and text.

    The other fields are the member's own: the message gets as far as it can.
    """
    ids = {
        "sandbox": [rival["sandbox"].pk, str(rival["sandbox"].pk)],
        "session": [str(rival["session"].pk)],
        "attempt_id": [rival["attempt"].pk, str(rival["attempt"].pk)],
        "run_id": [str(rival["run"].pk), rival["run"].pk.hex],
    }
    assert set(ids) <= set(_message_fields())
    body = "emit_result('theirs')\n"  # the rival attempt's own: runs it, were it found
    base = {"sandbox": sandbox.pk, "task": "Count the orders", "body": body, "retry": True}
    messages = [
        ({**base, "type": kind, field: value}, field)
        for kind in PlaygroundConsumer.MESSAGES
        for field, values in ids.items()
        for value in values
    ]
    whole = [
        # The rival's attempt in the rival's session, its body unchanged: runs it if it may.
        {"type": "run", "sandbox": rival["sandbox"].pk, "session": str(rival["session"].pk),
         "attempt_id": rival["attempt"].pk, "body": body, "task": "Count the orders"},
        {"type": "follow", "run_id": str(rival["run"].pk), "after": 0},
        {"type": "cancel"},  # after the follow above: stops nothing of theirs
    ]  # fmt: skip
    return [(_named(m, field), json.dumps(m)) for m, field in messages] + [
        (_named(m), json.dumps(m)) for m in whole
    ]


def _rival_paths(rival: dict[str, Any]) -> list[str]:
    real = {"build_id": str(rival["build"].pk), "run_id": str(rival["run"].pk)}
    paths = [_fill(route, real) for route, _c, _k in _sockets()]
    query = (f"sandbox={rival['sandbox'].pk}", f"submission={rival['submission'].pk}")
    return (
        paths + [f"/ws/reviews/queue/?{q}" for q in query] + [f"/ws/runs/{real['run_id']}/?after=0"]
    )


@pytest.mark.parametrize("role", ["signed out", "member", "team admin"])
async def test_another_teams_rows_are_neither_sent_nor_changed(
    own, member, team_admin, rival, role, raised
) -> None:
    user = {"signed out": None, "member": member, "team admin": team_admin}[role]
    before = await database_sync_to_async(_state)(rival)
    failures = []
    for path in _rival_paths(rival):
        try:
            ws, connected, detail = await _open(path, user)
            try:
                frames = await _first_frames(ws, path) if connected else []
                failures += [f"{path}: {p}" for p in _problems(frames, None)]
                if not connected and detail not in PROPER_CLOSE_CODES:
                    failures.append(f"{path}: refused with {detail}")
                if connected and path.startswith(("/ws/builds/", "/ws/runs/")):
                    failures.append(f"{path}: opened to a watcher of another team")
            finally:
                await ws.disconnect()
        except Exception as exc:
            failures.append(f"{path}: raised {exc!r}"[:300])
    if user is not None:
        socket = Playground(user, own["sandbox"])
        try:
            failures += await _sweep(socket, _rival_messages(rival, own["sandbox"]))
        finally:
            await socket.close()
    gc.collect()
    failures += raised
    assert not failures, "\n".join(failures[:60])
    assert await database_sync_to_async(_state)(rival) == before


async def test_the_rivals_own_admin_is_shown_them(rival) -> None:
    """The sweep above can see a leak: the same sockets opened by the rows' owner show MARK."""
    rex = await database_sync_to_async(get_user_model().objects.get)(username="rex")
    shown = []
    for path in _rival_paths(rival):
        ws, connected, _ = await _open(path, rex)
        try:
            frames = await _first_frames(ws, path) if connected else []
            shown += [path for frame in frames if MARK in frame]
        finally:
            await ws.disconnect()
    socket = Playground(rex, rival["sandbox"])
    try:
        answers, _closed = await socket.answer(
            json.dumps({"type": "follow", "run_id": str(rival["run"].pk), "after": 0})
        )
    finally:
        await socket.close()
    assert len(set(shown)) >= 3, shown  # the build, the run and the queue
    assert any(MARK in answer for answer in answers)
