"""The web process: daphne, with the request size limit enforced where the socket is read.

daphne (Twisted) reads a request's whole body, spooling it to a temporary file past 100 KB,
before it calls the ASGI app, so `RequestSizeLimitASGI` alone answers 413 only once every byte
has arrived: any anonymous client could fill the web host's disk or keep it busy. Here Twisted's
own request refuses it instead: a declared `Content-Length` over `JAZZMINE_MAX_UPLOAD_BYTES` as
soon as the headers end (not one byte of the body read), a chunked body as soon as it passes the
limit. Either gets the same 413 as the ASGI layer and the connection is closed, so at most the
limit (and the one socket read that passed it) is read and no more than the limit stored.
Websocket upgrades carry no body and are untouched; their frames are daphne's to limit
(`--websocket-max-message-size`).

Twisted's request would also parse a POSTed form body itself, answering one its parser cannot
read with a bare 400 the app never sees; it leaves the body to Django instead
(`LimitedWebRequest.__init__`).

Run it exactly like daphne, with daphne's options:

    python -m jazzmine_web.studio.server -b 127.0.0.1 -p 8000 jazzmine_web.asgi:application
"""

from __future__ import annotations

import logging
from http import HTTPStatus
from typing import Any

# daphne.cli imports daphne.server first, which installs Twisted's asyncio reactor: that has to
# happen before anything imports twisted.internet.reactor (daphne's own command does the same).
from daphne.cli import CommandLineInterface
from daphne.http_protocol import HTTPFactory, WebRequest
from daphne.server import Server
from twisted.web import http

from .limits import max_request_bytes, too_large_body

logger = logging.getLogger(__name__)


class LimitedWebRequest(WebRequest):
    """daphne's request, refusing a body over the limit while it is still on the wire.

    It also leaves a form body unparsed: see `__init__`.
    """

    _limit = 0
    _received = 0
    _refused = False

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # Twisted's request parses a POSTed form body itself once it has ended, into
        # `request.args`, and answers a multipart body its parser cannot read (no boundary, a
        # boundary the body never uses, a body cut short) with a bare `400 Bad Request` (no
        # body) and a closed connection: the app never sees the request, so an agent got no
        # JSON error and a browser an empty page. daphne never reads `args` (it hands the raw
        # body to the ASGI app, and Django parses it, as the path needs: the API refuses any
        # form body with its JSON 415, a page gets Django's 400 or CSRF 403). So the parse is
        # turned off, with Twisted's own switch: no bare refusals, and no second copy of a body
        # (up to the upload limit) read into memory to build what nobody reads.
        kwargs["parsePOSTFormSubmission"] = False
        super().__init__(*args, **kwargs)

    def gotLength(self, length: int | None) -> None:
        # Twisted calls this as the headers end, before any of the body is read; `None` means
        # chunked (no length declared).
        self._limit = max_request_bytes()
        if length is not None and length > self._limit:
            self._refuse()
            length = 0  # nothing of it is kept
        super().gotLength(length)

    def handleContentChunk(self, data: bytes) -> None:
        if self._refused:
            return  # bytes that came in the same socket read as the refusal
        self._received += len(data)
        if self._received > self._limit:
            self._refuse()
            return
        super().handleContentChunk(data)

    def requestReceived(self, command: bytes, path: bytes, version: bytes) -> None:
        # A refused body may end within a read that was already in: it is answered, never run.
        if not self._refused:
            super().requestReceived(command, path, version)

    def _refuse(self) -> None:
        """Answer 413 and close the connection, leaving the rest of the body unread."""
        self._refused = True
        channel = self.channel
        # Twisted hands the request line to the request only once the body has ended; until
        # then the channel holds it. The path only chooses the answer's shape (JSON for /api/).
        target: bytes = getattr(channel, "_path", b"")
        method: bytes = getattr(channel, "_command", b"")
        path = target.split(b"?", 1)[0].decode("latin-1")
        content_type, body = too_large_body(path, self._limit)
        headers = [
            (b"Content-Type", content_type),
            (b"Content-Length", str(len(body)).encode()),
            # The unread body is left behind, so the connection cannot be reused.
            (b"Connection", b"close"),
        ]
        if self.server.server_name:
            headers.append((b"Server", self.server.server_name.encode()))
        status = b"HTTP/1.1 413 " + http.RESPONSES[http.REQUEST_ENTITY_TOO_LARGE]
        head = b"".join([status, b"\r\n", *(b"%s: %s\r\n" % h for h in headers), b"\r\n"])
        channel.write(head + body)
        # Twisted would otherwise answer `Expect: 100-continue` right after this, inviting the
        # body we just refused.
        self.requestHeaders.removeHeader(b"Expect")
        # Stops reading at once; closes once the answer is written.
        channel.loseConnection()
        peer = self.client
        self.server.log_action(
            "http",
            "complete",
            {
                "path": target.decode("latin-1"),
                "status": 413,
                "method": method.decode("ascii", "replace"),
                "client": f"{peer.host}:{peer.port}" if hasattr(peer, "port") else None,
                "time_taken": 0.0,
                "size": len(body),
            },
        )


class LimitedHTTPFactory(HTTPFactory):
    """daphne's HTTP factory, its requests made by `LimitedWebRequest`, its heads limited."""

    def buildProtocol(self, addr: Any) -> Any:
        protocol = super().buildProtocol(addr)
        protocol.requestFactory = LimitedWebRequest
        # The HTTP/1.1 channel behind Twisted's protocol negotiation (its `_channel`).
        _answer_oversized_heads(getattr(protocol, "_channel", protocol))
        return protocol


def _answer_oversized_heads(channel: Any) -> None:
    """Answer a request line or headers past Twisted's limits with 414 or 431, then close.

    Twisted closed the connection without a word on a request line or one header line of
    over 16 KiB (`LineReceiver.MAX_LENGTH`), and answered a bare `400` with no body to headers
    of over 16 KiB together or over 500 of them: a client (an agent with a long query, a
    browser with a cookie that grew) could not tell what to change. The limits stay.
    """
    most = channel.MAX_LENGTH

    def line_too_long(line: bytes) -> None:
        if getattr(channel, "_HTTPChannel__first_line", 0):
            _refuse_head(channel, http.REQUEST_URI_TOO_LONG,
                         f"The request line (method, path and query) is longer than {most} "
                         "bytes; send long data in a request body instead.")  # fmt: skip
        else:
            _refuse_head(channel, REQUEST_HEADER_FIELDS_TOO_LARGE,
                         f"A request header is longer than {most} bytes.")  # fmt: skip

    def refused() -> None:
        if channel._receivedHeaderSize > channel.totalHeadersSize:
            _refuse_head(channel, REQUEST_HEADER_FIELDS_TOO_LARGE,
                         f"The request line and headers together are longer than "
                         f"{channel.totalHeadersSize} bytes.")  # fmt: skip
        elif channel._receivedHeaderCount > channel.maxHeaders:
            _refuse_head(channel, REQUEST_HEADER_FIELDS_TOO_LARGE,
                         f"The request has more than {channel.maxHeaders} headers.")  # fmt: skip
        else:
            # A request Twisted cannot parse at all: a bare 400 said nothing of what to mend.
            _refuse_head(channel, http.BAD_REQUEST,
                         "The request could not be read as HTTP: its head is malformed (a "
                         "header line without a colon or with a NUL, a Content-Length that "
                         "is no number, or Content-Length and Transfer-Encoding together).")  # fmt: skip

    channel.lineLengthExceeded = line_too_long
    channel._respondToBadRequestAndDisconnect = refused


REQUEST_HEADER_FIELDS_TOO_LARGE = 431  # RFC 6585, section 5


def _reason_phrases_complete() -> None:
    """Give Twisted the reason phrase of every status Python knows and Twisted does not.

    Twisted writes the status line of every answer daphne sends, and names neither 422 nor
    429 nor 431: the app's refusals went out as `HTTP/1.1 429 Unknown Status`.
    """
    for status in HTTPStatus:
        http.RESPONSES.setdefault(status.value, status.phrase.encode("ascii"))


_reason_phrases_complete()


def _refuse_head(channel: Any, status: int, message: str) -> None:
    """Write a plain-text refusal of a request's head, then close the connection."""
    body = (message + "\n").encode()
    reason = http.RESPONSES[status]
    channel.transport.write(
        b"HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\n"
        b"Content-Length: %d\r\nConnection: close\r\n\r\n%s" % (status, reason, len(body), body)
    )
    channel.loseConnection()


class LimitedServer(Server):
    """daphne's server, its HTTP connections served by `LimitedHTTPFactory`."""

    # daphne's run() makes its HTTPFactory itself and takes no other: it keeps it in this
    # attribute before it listens, so ours takes its place as it is set.
    @property
    def http_factory(self) -> HTTPFactory:
        return self._http_factory

    @http_factory.setter
    def http_factory(self, factory: HTTPFactory) -> None:
        if not isinstance(factory, LimitedHTTPFactory):
            factory = LimitedHTTPFactory(self)
        self._http_factory = factory

    def listen_success(self, port: Any) -> None:
        # Fail closed: a daphne that no longer goes through `http_factory` would listen with
        # its own factory, reading any body whole again.
        if not isinstance(getattr(port, "factory", None), LimitedHTTPFactory):
            logger.critical("Not serving: daphne listens without the request size limit")
            port.stopListening()
            self.stop()
            return
        super().listen_success(port)


class LimitedCommandLineInterface(CommandLineInterface):
    """daphne's command line (the same options), starting `LimitedServer`."""

    description = "Jazzmine Studio's web server: daphne, refusing bodies over the upload limit"
    server_class = LimitedServer

    def __init__(self) -> None:
        super().__init__()
        self.parser.prog = "python -m jazzmine_web.studio.server"


def main() -> None:
    """Run the web process with the command line's arguments."""
    LimitedCommandLineInterface.entrypoint()


if __name__ == "__main__":
    main()
