"""A small client for Jazzmine Studio's review API, for agents (httpx only, no Django).

    client = AgentClient("http://localhost:8000", token="jzm_...")
    sandbox = client.sandbox("shop/ecommerce")
    generator = client.generator(sandbox)           # ScriptGenerator over the sandbox's tools
    result = review_loop(client, sandbox=sandbox, task="...", write=my_llm)

`review_loop` submits, waits for the human decision and the run, and on a rejection (the
reviewer's feedback), validator violations, an expiry or a failed run builds the retry prompt
with `ScriptGenerator` (that text becomes `previous_error`) and submits the next attempt.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import httpx

from jazzmine.core.tools import SandboxConfig, ScriptGenerator, ToolParameter, ToolRegistry
from jazzmine.core.tools.generator import BODY_MARKER, python_body

SIGNATURE_HEADER = "X-Jazzmine-Signature"


class ApiError(Exception):
    """An error answer of the API, in its stable shape `{"error": {"code", "message"}}`."""

    def __init__(self, status: int, code: str, message: str, payload: dict[str, Any] | None = None):
        super().__init__(f"{status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message
        self.payload = payload or {}


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
    """Talk to the review API with one bearer token."""

    def __init__(
        self,
        base_url: str,
        token: str,
        *,
        timeout: float = 30.0,
        transport: httpx.BaseTransport | None = None,
        user_agent: str = "jazzmine-agent-client/1",
    ) -> None:
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
        response = self._http.request(method, path, **kwargs)
        if response.status_code >= 400:
            try:
                payload = response.json()
                error = payload["error"]
                raise ApiError(response.status_code, error["code"], error["message"], payload)
            except (ValueError, KeyError, TypeError):
                raise ApiError(response.status_code, "http_error", response.text[:300]) from None
        if response.status_code == 204:
            return None
        return response.json()

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
            "body": body_of(body),
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
        """Long-poll until the submission is final (or decided), or `timeout` seconds pass."""
        deadline = time.monotonic() + timeout
        while True:
            left = max(0.0, deadline - time.monotonic())
            chunk = min(poll, left)
            state = self._request(
                "GET",
                f"/api/v1/submissions/{submission_id}/wait/",
                params={"timeout": f"{chunk:.3f}", "until": until},
                timeout=chunk + 30.0,
            )
            if not state.get("timed_out") or time.monotonic() >= deadline:
                return state

    def events(self, submission_id: str, *, after: int = 0) -> Iterator[dict[str, Any]]:
        """Yield the submission's status lines and its run's events until it is final."""
        with self._http.stream(
            "GET",
            f"/api/v1/submissions/{submission_id}/events/",
            params={"after": after},
            timeout=httpx.Timeout(30.0, read=None),
        ) as response:
            if response.status_code >= 400:
                response.read()
                error = response.json().get("error", {})
                raise ApiError(
                    response.status_code, error.get("code", "?"), error.get("message", "")
                )
            for line in response.iter_lines():
                if line.strip():
                    yield json.loads(line)

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
