"""Turn what went wrong on the wire (a status, a transport failure, an error body) into LLM errors.

Messages never quote what a failed endpoint answered (only its status code and an OpenAI-style
error code): a URL aimed at an internal service must not read it back to the user.
"""

from __future__ import annotations

import contextlib
import json
import re
import socket
import ssl
import time
from collections.abc import Iterator, Mapping
from typing import Any

import httpx

from jazzmine.net import refusal_in

from .config import LLMConfig
from .errors import (
    LLMAuthError,
    LLMBadRequestError,
    LLMConfigError,
    LLMConnectionError,
    LLMError,
    LLMNotFoundError,
    LLMProtocolError,
    LLMRateLimitError,
    LLMServerError,
    LLMTimeoutError,
)

ALLOW_HINT = (
    "Internal addresses are refused unless the deployment allows the host "
    "(JAZZMINE_OUTBOUND_ALLOWED_HOSTS in Jazzmine Studio, e.g. 127.0.0.1:11434)."
)
# An error code an endpoint sends (`context_length_exceeded`) is shown; free text never is.
_ERROR_CODE = re.compile(r"^[A-Za-z][A-Za-z0-9_.-]{0,63}$")


@contextlib.contextmanager
def transport_errors(config: LLMConfig, url: str) -> Iterator[None]:
    """Translate httpx transport failures into LLM errors that name the URL."""
    timeout = config.timeout
    started = time.monotonic()
    try:
        yield
    except httpx.ConnectTimeout as exc:
        raise LLMTimeoutError(
            f"Timed out connecting to {url} after {min(timeout, 10.0):g}s", url=url
        ) from exc
    except httpx.TimeoutException as exc:
        # A read cut short by the exchange's deadline times out like a slow one: told by the clock.
        if time.monotonic() - started >= config.total_timeout - 0.05:
            raise LLMTimeoutError(
                f"{url} did not finish its answer within {config.total_timeout:g}s "
                "(the total timeout of one request)",
                url=url,
            ) from exc
        raise LLMTimeoutError(
            f"{url} sent nothing for {timeout:g}s (timeout); the model may be loading or "
            "overloaded, or the timeout too short",
            url=url,
        ) from exc
    except httpx.ConnectError as exc:
        refusal = refusal_in(exc)
        if refusal is not None:
            raise LLMConfigError(
                f"{url} was not contacted: {refusal}. {ALLOW_HINT}", url=url
            ) from exc
        raise LLMConnectionError(
            f"Could not connect to {url}: {_connect_reason(exc)}. "
            "Is the LLM server running and the base URL right?",
            url=url,
        ) from exc
    except httpx.RemoteProtocolError as exc:
        # h11's message quotes the offending answer line (`illegal header line: b'...'`).
        raise LLMProtocolError(
            f"The connection to {url} broke mid-answer: the server broke the HTTP protocol",
            url=url,
        ) from exc
    except httpx.ReadError as exc:
        raise LLMProtocolError(
            f"The connection to {url} broke mid-answer: it was reset or closed", url=url
        ) from exc
    except httpx.DecodingError as exc:
        raise LLMProtocolError(
            f"{url} sent an answer whose content encoding cannot be decoded", url=url
        ) from exc
    except httpx.HTTPError as exc:
        # The kind only: an httpx message may carry what the server sent.
        raise LLMConnectionError(
            f"Request to {url} failed ({type(exc).__name__})", url=url
        ) from exc


def _connect_reason(exc: BaseException) -> str:
    """Return the OS-level reason under httpx's generic "All connection attempts failed"."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, ConnectionRefusedError):
            return "connection refused"
        if isinstance(seen, socket.gaierror):
            return f"unknown host ({seen.strerror})"
        if isinstance(seen, ssl.SSLError):
            # OpenSSL's short reason only: the long message can name the certificate's hosts.
            return f"TLS failed ({seen.reason or 'handshake'})"
        seen = seen.__cause__ or seen.__context__
    return str(exc) or type(exc).__name__


def status_error(
    config: LLMConfig, url: str, status: int, headers: Mapping[str, str], body: str
) -> LLMError:
    """Return the error for a non-200 answer: the status and a sentence, never the body."""
    code = error_code(config, body)
    if status in (401, 403):
        key = "no API key was set" if not config.api_key else "the API key was refused"
        return LLMAuthError(f"{url} answered {status}: {key}.{code}", url=url, status=status)
    if status == 404:
        return LLMNotFoundError(
            f"{url} answered 404: check the base URL (it usually ends in /v1) and that the "
            f"endpoint serves model {config.model!r}.{code}",
            url=url,
            status=status,
        )
    if status == 429:
        retry_after = _retry_after(headers.get("retry-after"))
        wait = f" Retry after {retry_after:g}s." if retry_after is not None else ""
        return LLMRateLimitError(
            f"{url} answered 429: rate limited or out of quota.{wait}{code}",
            url=url,
            retry_after=retry_after,
        )
    if status >= 500:
        return LLMServerError(
            f"{url} answered {status}: the server failed; try again later.{code}",
            url=url,
            status=status,
        )
    return LLMBadRequestError(
        f"{url} answered {status}: the endpoint refused the request (often a prompt longer than "
        f"the model's context).{code}",
        url=url,
        status=status,
    )


def error_code(config: LLMConfig, body: str | Mapping[str, Any]) -> str:
    """Return " Error code: X." when an OpenAI-style body names an identifier-shaped code."""
    data: Any = body
    if isinstance(body, str):
        try:
            data = json.loads(body)
        except ValueError:
            return ""
    error = data.get("error") if isinstance(data, Mapping) else None
    if not isinstance(error, Mapping):
        return ""
    for key in ("code", "type"):
        value = error.get(key)
        if (
            isinstance(value, str)
            and _ERROR_CODE.match(value)
            and not (config.api_key and config.api_key in value)
        ):
            return f" Error code: {value}."
    return ""


def _retry_after(value: str | None) -> float | None:
    """Return Retry-After in seconds when it is a number (HTTP dates are rare here)."""
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None
