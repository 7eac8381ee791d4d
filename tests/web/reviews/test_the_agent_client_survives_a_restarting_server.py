"""The agent client's reads survive a web process that restarts while they wait.

Run against two web processes, the README's agent died the first time the one it talked to
restarted: `httpx.RemoteProtocolError: Server disconnected without sending a response.` from
`wait`, its submission left pending and forgotten. Reads (a long poll, a status, the event
stream) are retried and the stream resumes after its last event; POSTs are never sent twice.

The server is the real one (`live_server`); between it and the client sits a transport that
fails chosen requests the ways a restarting process or a switching load balancer does.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator

import httpx
import pytest

from jazzmine.agent_client import AgentClient, ApiError, ServerUnreachable
from jazzmine_web.reviews.models import ReviewPolicy, Submission, SubmissionStatus
from jazzmine_web.reviews.services import submission_reject
from jazzmine_web.runs.models import Run, RunEvent, RunStatus
from jazzmine_web.runs.services import run_create

from .conftest import set_policy

pytestmark = pytest.mark.django_db(transaction=True)

FAST = {"retry_patience": 10.0, "retry_backoff": (0.01, 0.05)}
EVENTS = 6
CUT_AFTER = 3


class _CutStream(httpx.SyncByteStream):
    """The stream's lines up to the event `after`, then how its connection ended."""

    def __init__(self, lines: list[bytes], after: int, ending: str, request: httpx.Request):
        self.lines = lines
        self.after = after
        self.ending = ending
        self.request = request

    def __iter__(self) -> Iterator[bytes]:
        for index, line in enumerate(self.lines):
            yield line
            item = json.loads(line)
            if item["type"] == "event" and item["event"]["seq"] == self.after:
                rest = self.lines[index + 1]
                if self.ending == "dropped":
                    yield rest[: len(rest) // 2]  # half a line, then the connection is gone
                    raise httpx.RemoteProtocolError(
                        "peer closed connection without sending complete message body "
                        "(incomplete chunked read)",
                        request=self.request,
                    )
                if self.ending == "closed mid-line":
                    yield rest[: len(rest) // 2]  # a close-delimited body ends cleanly here
                return  # "closed": the body ends at a line's end, without the `end` line
        raise AssertionError(f"no event {self.after} in the stream")


class Restarting(httpx.BaseTransport):
    """Pass requests to the live server, but fail the next ones as `plan` says.

    `refused`: the connection is refused (the process is down), nothing reaches the server;
    `dropped`: the server is gone before it answers, nothing reaches it either;
    `lost`: the server does the request, then its answer is lost with the connection;
    `502`: a load balancer answers that its upstream went away;
    `cut`, `closed`, `closed mid-line`: an event stream ends after event CUT_AFTER.
    `on_fail` runs at each failure (what happens on the server meanwhile).
    """

    def __init__(self) -> None:
        self.real = httpx.HTTPTransport()
        self.plan: list[str] = []
        self.on_fail: Callable[[], None] | None = None
        self.seen: list[httpx.Request] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.seen.append(request)
        step = self.plan.pop(0) if self.plan else "pass"
        if step != "pass" and self.on_fail is not None:
            self.on_fail()
        if step == "refused":
            raise httpx.ConnectError("[Errno 111] Connection refused", request=request)
        if step == "dropped":
            raise httpx.RemoteProtocolError(
                "Server disconnected without sending a response.", request=request
            )
        if step == "502":
            return httpx.Response(502, html="<h1>502 Bad Gateway</h1>", request=request)
        response = self.real.handle_request(request)
        if step == "lost":
            response.read()
            response.close()
            raise httpx.RemoteProtocolError(
                "Server disconnected without sending a response.", request=request
            )
        if step in ("cut", "closed", "closed mid-line"):
            body = response.read()
            response.close()
            ending = "dropped" if step == "cut" else step
            return httpx.Response(
                response.status_code,
                headers={"Content-Type": response.headers["Content-Type"]},
                stream=_CutStream(body.splitlines(keepends=True), CUT_AFTER, ending, request),
                request=request,
            )
        return response

    def close(self) -> None:
        self.real.close()

    def sent(self, method: str, ending: str) -> list[httpx.Request]:
        return [r for r in self.seen if r.method == method and r.url.path.endswith(ending)]


@pytest.fixture
def restarting() -> Iterator[Restarting]:
    transport = Restarting()
    yield transport
    transport.close()


@pytest.fixture
def agent(live_server, issued, restarting) -> Iterator[AgentClient]:
    with AgentClient(live_server.url, issued.raw, transport=restarting, **FAST) as client:
        yield client


@pytest.fixture
def pending(agent, ecommerce) -> dict:
    set_policy(ecommerce, ReviewPolicy.ALWAYS)
    state = agent.submit(sandbox=ecommerce.pk, task="t", body="emit_result(1)\n")
    assert state["status"] == "pending"
    return state


def test_a_wait_whose_server_restarts_returns_the_decision(
    agent, restarting, pending, reviewer
) -> None:
    def decide() -> None:  # while the web process restarts, the reviewer decides
        if not Submission.objects.filter(pk=pending["id"], status="rejected").exists():
            submission_reject(
                submission=Submission.objects.get(pk=pending["id"]),
                user=reviewer,
                feedback="Not today.",
            )

    restarting.on_fail = decide
    restarting.plan = ["dropped", "refused", "refused", "502"]
    state = agent.wait(pending["id"], timeout=30)
    assert state["status"] == "rejected" and state["final"] is True
    assert state["timed_out"] is False and "Not today." in state["previous_error"]
    assert len(restarting.sent("GET", "/wait/")) == 5


def test_a_status_read_whose_answer_is_lost_is_asked_again(agent, restarting, pending) -> None:
    restarting.plan = ["lost"]
    assert agent.status(pending["id"])["status"] == "pending"
    assert len(restarting.sent("GET", f"/{pending['id']}/")) == 2


@pytest.fixture
def ran(agent, pending, ecommerce, member) -> dict:
    """The submission approved and its run finished with EVENTS events (no worker needed)."""
    run = run_create(sandbox=ecommerce, user=member, body="emit_result(1)", start=False)
    RunEvent.objects.bulk_create(
        RunEvent(run=run, seq=seq, type="log", data={"message": f"line {seq}"}, ts=float(seq))
        for seq in range(1, EVENTS + 1)
    )
    Run.objects.filter(pk=run.pk).update(status=RunStatus.SUCCEEDED)
    Submission.objects.filter(pk=pending["id"]).update(run=run, status=SubmissionStatus.APPROVED)
    return pending


@pytest.mark.parametrize("ending", ["cut", "closed", "closed mid-line"])
def test_an_event_stream_cut_off_resumes_after_its_last_event(
    agent, restarting, ran, ending
) -> None:
    restarting.plan = [ending, "refused", "502"]
    lines = list(agent.events(ran["id"]))
    events = [line["event"]["seq"] for line in lines if line["type"] == "event"]
    assert events == list(range(1, EVENTS + 1))  # none lost, none twice
    kinds = [line["type"] for line in lines]
    # The second stream's `submission` line, unchanged, is not said again.
    assert kinds == ["submission"] + ["event"] * EVENTS + ["run", "end"]
    assert lines[-1] == {"type": "end", "status": "approved", "final": True}
    opened = restarting.sent("GET", "/events/")
    assert [r.url.params["after"] for r in opened] == ["0"] + [str(CUT_AFTER)] * 3


def test_an_event_stream_opened_after_an_event_starts_past_it(agent, ran) -> None:
    lines = list(agent.events(ran["id"], after=4))
    assert [line["event"]["seq"] for line in lines if line["type"] == "event"] == [5, 6]


def test_a_submit_whose_answer_is_lost_is_not_sent_again(agent, restarting, ecommerce) -> None:
    restarting.plan = ["lost"]
    with pytest.raises(httpx.RemoteProtocolError):
        agent.submit(sandbox=ecommerce.pk, task="t", body="emit_result(1)\n")
    assert len(restarting.sent("POST", "/submissions/")) == 1
    assert Submission.objects.count() == 1  # done once, by the one request


@pytest.mark.parametrize("action", ["withdraw", "cancel"])
def test_other_posts_are_not_sent_again_either(agent, restarting, pending, action) -> None:
    restarting.plan = ["refused"]
    with pytest.raises(httpx.ConnectError):
        getattr(agent, action)(pending["id"])
    assert len(restarting.sent("POST", f"/{action}/")) == 1


def test_a_404_is_raised_at_once(agent, restarting) -> None:
    missing = "00000000-0000-0000-0000-000000000000"
    started = time.monotonic()
    for read in (agent.status, agent.wait, lambda ref: list(agent.events(ref))):
        with pytest.raises(ApiError) as error:
            read(missing)
        assert error.value.status == 404
    assert len(restarting.seen) == 3  # one request each: no retry
    assert time.monotonic() - started < 5


def test_out_of_patience_says_so(live_server, issued, restarting, pending) -> None:
    restarting.plan = ["refused"] * 1000
    with AgentClient(
        live_server.url,
        issued.raw,
        transport=restarting,
        retry_patience=0.6,
        retry_backoff=(0.05, 0.2),
    ) as client:
        started = time.monotonic()
        with pytest.raises(ServerUnreachable) as error:
            client.status(pending["id"])
        elapsed = time.monotonic() - started
    assert 0.6 <= elapsed < 3
    message = str(error.value)
    assert f"GET /api/v1/submissions/{pending['id']}/" in message
    assert "retry_patience" in message and "Connection refused" in message
    assert isinstance(error.value.__cause__, httpx.ConnectError)
    # 0.05, 0.1, 0.2, 0.2, ... apart: a few attempts, not a busy loop.
    assert 4 <= error.value.attempts == len(restarting.seen) - 1 <= 10


def test_without_patience_the_first_failure_is_raised_as_it_came(
    live_server, issued, restarting, pending
) -> None:
    restarting.plan = ["dropped"]
    with AgentClient(live_server.url, issued.raw, transport=restarting, retry_patience=0) as client:
        with pytest.raises(httpx.RemoteProtocolError):
            client.status(pending["id"])
    assert len(restarting.sent("GET", f"/{pending['id']}/")) == 1
