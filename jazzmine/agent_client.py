"""A small client for Jazzmine Studio's review API, for agents (httpx only, no Django).

    client = AgentClient("http://localhost:8000", token="jzm_...")
    sandbox = client.sandbox("shop/ecommerce")
    generator = client.generator(sandbox)           # ScriptGenerator over the sandbox's tools
    result = review_loop(client, sandbox=sandbox, task="...", write=my_llm)

`review_loop` submits, waits for the human decision and the run, and on a rejection (the
reviewer's feedback), validator violations, an expiry or a failed run builds the retry prompt
with `ScriptGenerator` (that text becomes `previous_error`) and submits the next attempt.

The reads (`status`, `wait`, `events` and every other GET) ride out a restarting web process:
a refused, reset or dropped connection, a read timeout or a gateway's 502/503/504 is retried
with a doubling pause for up to `retry_patience` seconds, and `events` opens its stream again
after the last event it yielded. POSTs are never sent twice: they are not idempotent.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, TypeVar
from urllib.parse import urlsplit

import httpx

from jazzmine.core.tools import SandboxConfig, ScriptGenerator, ToolParameter, ToolRegistry
from jazzmine.core.tools.generator import BODY_MARKER, python_body

SIGNATURE_HEADER = "X-Jazzmine-Signature"

T = TypeVar("T")

# Failures after which a read may simply be sent again: the connection was refused, reset or
# closed before (or while) the answer came, or it timed out. Not a LocalProtocolError or an
# UnsupportedProtocol: those are this side's mistakes, and another attempt makes the same.
_RETRYABLE: tuple[type[Exception], ...] = (
    httpx.NetworkError,
    httpx.RemoteProtocolError,
    httpx.TimeoutException,
)

# What a load balancer or proxy answers while the web process behind it restarts. The API's
# reads never answer these themselves; any other error answer (a 404, a 401) is the API's
# own and is raised at once: asking again would get the same.
_GATEWAY_STATUSES = frozenset({502, 503, 504})


class ApiError(Exception):
    """An error answer of the API, in its stable shape `{"error": {"code", "message"}}`."""

    def __init__(self, status: int, code: str, message: str, payload: dict[str, Any] | None = None):
        super().__init__(f"{status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message
        self.payload = payload or {}


class ServerUnreachable(httpx.TransportError):
    """A read that failed on every attempt for the client's whole `retry_patience`.

    A `httpx.TransportError`, as the first failure was before the client retried: code that
    caught those goes on catching this. `last` is the last failure (its `__cause__` too).
    """

    def __init__(self, what: str, attempts: int, waited: float, last: Exception) -> None:
        super().__init__(
            f"{what}: no answer from the server after {attempts} attempts over {waited:.1f} s "
            f"(the client's retry_patience); the last failure: {type(last).__name__}: {last}"
        )
        self.what = what
        self.attempts = attempts
        self.waited = waited
        self.last = last


class _StreamCut(Exception):
    """An event stream that ended before its `end` line: cut, not finished."""


class _Patience:
    """The retries of one read: a pause doubling from `first` to `most` between attempts,
    until `patience` seconds have passed since the first failure in a row."""

    def __init__(self, what: str, patience: float, first: float, most: float) -> None:
        self.what = what
        self.patience = patience
        self.first = first
        self.most = most
        self.failures = 0
        self.since: float | None = None

    def succeeded(self) -> None:
        """Start counting afresh: the server answered, so a later failure is a new outage."""
        self.failures = 0
        self.since = None

    def failed(self, exc: Exception) -> None:
        """Pause before the next attempt; raise `ServerUnreachable` once patience is spent."""
        if self.patience <= 0:
            raise exc  # retrying is off: the failure as it came, as before retries existed
        now = time.monotonic()
        if self.since is None:
            self.since = now
        self.failures += 1
        waited = now - self.since
        left = self.patience - waited
        if left <= 0:
            raise ServerUnreachable(self.what, self.failures, waited, exc) from exc
        pause = self.first * 2 ** min(self.failures - 1, 30)
        time.sleep(min(pause, self.most, left))


@dataclass(frozen=True)
class SandboxRef:
    """A sandbox as the API lists it."""

    id: int
    team: str
    name: str


def _is_loopback(url: str) -> bool:
    host = (urlsplit(url).hostname or "").lower()
    return host in ("localhost", "::1") or host.startswith("127.")


class AgentClient:
    """Talk to the review API with one bearer token.

    Reads are retried on a transport failure or a gateway's 502/503/504, pausing
    `retry_backoff[0]` seconds, doubling up to `retry_backoff[1]`, for `retry_patience`
    seconds from the first failure in a row (then `ServerUnreachable`); 0 turns that off.
    """

    def __init__(
        self,
        base_url: str,
        token: str,
        *,
        timeout: float = 30.0,
        transport: httpx.BaseTransport | None = None,
        user_agent: str = "jazzmine-agent-client/1",
        retry_patience: float = 60.0,
        retry_backoff: tuple[float, float] = (0.2, 5.0),
    ) -> None:
        first, most = retry_backoff
        if retry_patience < 0 or first < 0 or most < first:
            raise ValueError(
                "retry_patience must be 0 or more; retry_backoff is (first, most) pauses "
                "with 0 <= first <= most"
            )
        self.retry_patience = retry_patience
        self.retry_backoff = (first, most)
        self.base_url = base_url.rstrip("/")
        self._http = httpx.Client(
            base_url=self.base_url,
            headers={"Authorization": f"Bearer {token}", "User-Agent": user_agent},
            timeout=timeout,
            transport=transport,
            # A proxy from the environment must not swallow requests to a local server.
            trust_env=not _is_loopback(self.base_url),
        )

    def close(self) -> None:
        """Close the connection pool."""
        self._http.close()

    def __enter__(self) -> AgentClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # Plumbing

    def _request(self, method: str, path: str, **kwargs: Any) -> Any:
        if method != "GET":
            # Not idempotent: a POST whose answer was lost may have been done, and sending it
            # again would submit twice. Its failure goes to the caller, who can look first.
            return self._answer(self._http.request(method, path, **kwargs))
        return self._retrying(
            f"GET {path}", lambda: self._answer(self._http.request(method, path, **kwargs))
        )

    @staticmethod
    def _error(response: httpx.Response) -> ApiError:
        """Return the ApiError of an error answer (read already), JSON or not (a gateway's)."""
        try:
            payload = response.json()
            error = payload["error"]
            return ApiError(response.status_code, error["code"], error["message"], payload)
        except (ValueError, KeyError, TypeError):
            return ApiError(response.status_code, "http_error", response.text[:300])

    def _answer(self, response: httpx.Response) -> Any:
        if response.status_code >= 400:
            raise self._error(response)
        if response.status_code == 204:
            return None
        return response.json()

    def _patience(self, what: str) -> _Patience:
        return _Patience(what, self.retry_patience, *self.retry_backoff)

    def _retrying(self, what: str, call: Callable[[], T]) -> T:
        """Return `call()`, called again after each failure a restarting server causes."""
        patience = self._patience(what)
        while True:
            try:
                return call()
            except _RETRYABLE as exc:
                patience.failed(exc)
            except ApiError as exc:
                if exc.status not in _GATEWAY_STATUSES:
                    raise
                patience.failed(exc)

    # Sandboxes

    def sandboxes(self) -> list[SandboxRef]:
        """Return the sandboxes of the token owner's teams."""
        rows = self._request("GET", "/api/v1/sandboxes/")["sandboxes"]
        return [SandboxRef(id=r["id"], team=r["team"], name=r["name"]) for r in rows]

    def sandbox(self, ref: str | int) -> SandboxRef:
        """Find a sandbox by id, "team/name" or name."""
        for s in self.sandboxes():
            if ref in (s.id, f"{s.team}/{s.name}", s.name, str(s.id)):
                return s
        raise ApiError(404, "sandbox_not_found", f"No sandbox {ref!r} in your teams.")

    def registry(self, sandbox: SandboxRef) -> ToolRegistry:
        """Return a registry with the sandbox's tool interfaces (for prompts and local checks).

        The API does not send tool code: each tool is registered with a stub body, which is
        all `build_prompt` and `validate` look at.
        """
        data = self._request("GET", f"/api/v1/sandboxes/{sandbox.id}/tools/")
        registry = ToolRegistry()
        registry.register_sandbox(SandboxConfig(name=sandbox.name))
        for row in data["tools"]:
            registry.register_source(
                f"def {row['name']}(*args, **kwargs):\n    raise NotImplementedError\n",
                sandbox=sandbox.name,
                description=row["description"],
                parameters=[ToolParameter.from_dict(p) for p in row["parameters"]],
                name=row["name"],
            )
        return registry

    def generator(self, sandbox: SandboxRef) -> ScriptGenerator:
        """Return a ScriptGenerator over the sandbox's tools."""
        return ScriptGenerator(self.registry(sandbox))

    # Submissions

    def submit(
        self,
        *,
        sandbox: SandboxRef | str | int,
        task: str,
        body: str,
        prompt: str = "",
        attempt: int = 1,
        previous: str | None = None,
        language: str = "python",
    ) -> dict[str, Any]:
        """Submit a script body (Python, or bash); violations come back at once in the answer."""
        ref = sandbox.id if isinstance(sandbox, SandboxRef) else sandbox
        payload: dict[str, Any] = {
            "sandbox": ref,
            "task": task,
            # A bash script is all body: only a Python one may come assembled.
            "body": body_of(body) if language == "python" else body,
            "prompt": prompt,
            "attempt": attempt,
            "language": language,
        }
        if previous:
            payload["previous"] = previous
        return self._request("POST", "/api/v1/submissions/", json=payload)

    def status(self, submission_id: str) -> dict[str, Any]:
        """Return a submission's current state."""
        return self._request("GET", f"/api/v1/submissions/{submission_id}/")

    def withdraw(self, submission_id: str, *, reason: str = "") -> dict[str, Any]:
        """Take back a submission still waiting for review: it never runs (`withdrawn`)."""
        return self._request(
            "POST", f"/api/v1/submissions/{submission_id}/withdraw/", json={"reason": reason}
        )

    def cancel(self, submission_id: str) -> dict[str, Any]:
        """Stop the submission's run; the state says whether it was live (`cancelled`)."""
        return self._request("POST", f"/api/v1/submissions/{submission_id}/cancel/")

    def wait(
        self,
        submission_id: str,
        *,
        timeout: float = 600.0,
        until: str = "final",
        poll: float = 30.0,
    ) -> dict[str, Any]:
        """Long-poll until the submission is final (or decided), or `timeout` seconds pass.

        A poll the server dropped (it restarted) is asked again, for what is left of `timeout`.
        """
        deadline = time.monotonic() + timeout
        path = f"/api/v1/submissions/{submission_id}/wait/"

        def ask() -> dict[str, Any]:
            # Measured on each attempt: a retry waits only what is left, not a whole chunk more.
            chunk = min(poll, max(0.0, deadline - time.monotonic()))
            return self._answer(
                self._http.request(
                    "GET",
                    path,
                    params={"timeout": f"{chunk:.3f}", "until": until},
                    timeout=chunk + 30.0,
                )
            )

        while True:
            state = self._retrying(f"GET {path}", ask)
            if not state.get("timed_out") or time.monotonic() >= deadline:
                return state

    def events(self, submission_id: str, *, after: int = 0) -> Iterator[dict[str, Any]]:
        """Yield the submission's status lines and its run's events until it is final.

        A stream that breaks off (a restarting web process, a switching load balancer: the
        connection drops, or closes before the `end` line) is opened again with `after` the
        last event's `seq`: no event is lost or yielded twice, and a status line (`submission`,
        `run`) the new stream repeats unchanged is not yielded again. An `end` line, whatever
        its reason, ends the iteration as before.
        """
        path = f"/api/v1/submissions/{submission_id}/events/"
        patience = self._patience(f"GET {path}")
        resuming = self.retry_patience > 0
        last: dict[str, dict[str, Any]] = {}  # the last status line of each type yielded
        while True:
            try:
                with self._http.stream(
                    "GET", path, params={"after": after}, timeout=httpx.Timeout(30.0, read=None)
                ) as response:
                    if response.status_code >= 400:
                        response.read()
                        raise self._error(response)
                    for line in response.iter_lines():
                        if not line.strip():
                            continue
                        try:
                            item = json.loads(line)
                        except ValueError:
                            if not resuming:
                                raise
                            # Only a stream's last line can be partial: one the connection cut.
                            raise _StreamCut("a line cut short") from None
                        patience.succeeded()
                        kind = item.get("type")
                        if kind == "event":
                            if item["event"]["seq"] <= after:
                                continue
                            after = item["event"]["seq"]
                        elif kind in ("submission", "run"):
                            if last.get(kind) == item:
                                continue  # said already, before the stream was opened again
                            last[kind] = item
                        yield item
                        if kind == "end":
                            return
                if not resuming:
                    return
                # The server ends every stream with an `end` line, save one whose submission
                # went out of sight (opened again, that answers 404, raised below).
                raise _StreamCut("the stream ended without its end line")
            except (*_RETRYABLE, _StreamCut) as exc:
                patience.failed(exc)
            except ApiError as exc:
                if exc.status not in _GATEWAY_STATUSES:
                    raise
                patience.failed(exc)

    # Webhook

    def set_webhook(self, url: str) -> dict[str, Any]:
        """Point this token's webhook at a URL; the answer holds the signing secret, once."""
        return self._request("PUT", "/api/v1/webhook/", json={"url": url})

    def webhook(self) -> dict[str, Any]:
        """Return this token's webhook and its recent deliveries with their attempts."""
        return self._request("GET", "/api/v1/webhook/")

    def clear_webhook(self) -> None:
        """Remove this token's webhook."""
        self._request("DELETE", "/api/v1/webhook/")


def verify_signature(
    *, secret: str, body: bytes, header: str, tolerance: float | None = 300.0
) -> bool:
    """Tell whether a webhook body carries a valid `X-Jazzmine-Signature` (and is recent)."""
    parts = dict(item.split("=", 1) for item in header.split(",") if "=" in item)
    try:
        timestamp = int(parts["t"])
        claimed = parts["v1"]
    except (KeyError, ValueError):
        return False
    if tolerance is not None and abs(time.time() - timestamp) > tolerance:
        return False
    expected = hmac.new(
        secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256
    ).hexdigest()
    # Bytes: on a str holding a non-ASCII character compare_digest raises instead of answering.
    return hmac.compare_digest(expected.encode(), claimed.encode("utf-8", "surrogatepass"))


def body_of(script: str) -> str:
    """Return the body of an assembled script (or the text itself when it is only a body)."""
    _head, marker, body = script.partition(BODY_MARKER + "\n")
    return body if marker else python_body(script)


# The loop


@dataclass
class LoopAttempt:
    """One submission of the loop and how it ended."""

    number: int
    prompt: str
    body: str
    state: dict[str, Any]

    @property
    def succeeded(self) -> bool:
        """Tell whether the script ran and succeeded."""
        run = self.state.get("run") or {}
        return run.get("status") == "succeeded"


@dataclass
class LoopResult:
    """Every attempt of a loop; the result of the last one when it succeeded."""

    attempts: list[LoopAttempt] = field(default_factory=list)

    @property
    def succeeded(self) -> bool:
        """Tell whether the last attempt succeeded."""
        return bool(self.attempts) and self.attempts[-1].succeeded

    @property
    def result(self) -> Any:
        """Return the script's result (emit_result) when it succeeded."""
        return (self.attempts[-1].state.get("run") or {}).get("result") if self.succeeded else None


Write = Callable[[str], str]


def review_loop(
    client: AgentClient,
    *,
    sandbox: SandboxRef,
    task: str,
    write: Write,
    generator: ScriptGenerator | None = None,
    max_attempts: int = 3,
    wait_timeout: float = 3600.0,
    on_attempt: Callable[[LoopAttempt], None] | None = None,
) -> LoopResult:
    """Prompt, submit, wait for the review and the run; retry with the failure as `previous_error`.

    `write` turns a prompt into a script (an LLM call). A rejection's feedback, validator
    violations, an expiry or a run's error is the next prompt's `previous_error`. A failure of
    the platform itself (`infrastructure_error`) ends the loop: rewriting the script is no cure.
    """
    generator = generator or client.generator(sandbox)
    outcome = LoopResult()
    previous_id: str | None = None
    previous_body: str | None = None
    previous_error: str | None = None
    for number in range(1, max_attempts + 1):
        prompt = generator.build_prompt(task, sandbox.name, previous_body, previous_error, number)
        body = body_of(write(prompt))
        state = client.submit(
            sandbox=sandbox,
            task=task,
            body=body,
            prompt=prompt,
            attempt=number,
            previous=previous_id,
        )
        if not state["final"]:
            state = client.wait(state["id"], timeout=wait_timeout)
        attempt = LoopAttempt(number=number, prompt=prompt, body=body, state=state)
        outcome.attempts.append(attempt)
        if on_attempt is not None:
            on_attempt(attempt)
        if attempt.succeeded or not state["final"]:
            break  # done, or nobody decided within our own patience
        if state["status"] == "withdrawn":
            break  # taken back on purpose (by another of our processes): not a failure to fix
        if state.get("infrastructure_error"):
            break  # the platform failed, not the script: another script would fare no better
        previous_id = state["id"]
        # What ran is what the next attempt improves on: the reviewer's edit when there was one.
        previous_body = state.get("approved_body") or body
        previous_error = state.get("previous_error") or "The script did not succeed."
    return outcome
