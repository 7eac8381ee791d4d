"""Read an endpoint's answer within a size bound: a user's endpoint may send without end.

An endpoint is any server a user names, and its answer is read in this process (the web server's,
for the playground). Read whole (`aread`, `aiter_lines`), a body or a single line that never ends
would be held in memory until the process dies, for every user of it. These readers count the
decoded bytes (after gzip), so a small compressed answer cannot unpack past the bound either.

They unpack the body themselves, a piece of at most `PIECE` bytes at a time: httpx unpacks each
read whole and stacks codings as sent, so 2 KiB packed twice (`gzip, gzip`) became a gibibyte
in one call, before any count saw it. One coding at most is read, and only those asked for.
"""

from __future__ import annotations

import codecs
import zlib
from collections.abc import AsyncIterator, Iterator

import httpx

from .errors import LLMProtocolError

# Far above any script's answer with its server-sent-event framing (a few hundred bytes of
# JSON per token), and what one answer may make this process hold.
MAX_ANSWER_BYTES = 16 * 1024 * 1024
# An error answer is read only for its error code.
MAX_ERROR_BYTES = 64 * 1024
# The content codings asked for (`Accept-Encoding`) and read; whatever else a server sends fails.
ACCEPT_ENCODING = "gzip, deflate"
# The most one step of unpacking may produce, however well the answer was packed.
PIECE = 64 * 1024
# What `str.splitlines` splits on, as httpx's own line reader does.
_LINE_BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"


async def read_within(response: httpx.Response, *, url: str, limit: int = MAX_ANSWER_BYTES) -> str:
    """Return the whole body as text; raise LLMProtocolError once it passes `limit` bytes."""
    parts: list[bytes] = []
    seen = 0
    async for chunk in decoded(response, url=url):
        seen += len(chunk)
        if seen > limit:
            raise too_large(url, limit)
        parts.append(chunk)
    return b"".join(parts).decode("utf-8", "replace")


async def read_head(response: httpx.Response, limit: int = MAX_ERROR_BYTES) -> str:
    """Return at most the first `limit` bytes of the body as text; the rest is never read."""
    parts: list[bytes] = []
    seen = 0
    try:
        async for chunk in decoded(response, url=""):
            parts.append(chunk[: limit - seen])
            seen += len(parts[-1])
            if seen >= limit:
                break
    except LLMProtocolError:
        pass  # read only for an error code: a body that cannot be unpacked has none
    return b"".join(parts).decode("utf-8", "replace")


async def lines_within(
    response: httpx.Response, *, url: str, limit: int = MAX_ANSWER_BYTES
) -> AsyncIterator[str]:
    """Yield the body's lines as `response.aiter_lines()` does; raise past `limit` bytes."""
    decoder = codecs.getincrementaldecoder(response.encoding or "utf-8")(errors="replace")
    splitter = _LineSplitter()
    seen = 0
    async for chunk in decoded(response, url=url):
        seen += len(chunk)
        if seen > limit:
            raise too_large(url, limit)
        for line in splitter.split(decoder.decode(chunk)):
            yield line
    for line in splitter.split(decoder.decode(b"", final=True)) + splitter.flush():
        yield line


async def decoded(response: httpx.Response, *, url: str) -> AsyncIterator[bytes]:
    """Yield the body unpacked, in pieces of at most `PIECE` bytes; refuse unread codings."""
    if response.is_stream_consumed:
        # Read already (made in memory, as a mock transport makes it): nothing left to unpack.
        body = response.content
        for start in range(0, len(body), PIECE):
            yield body[start : start + PIECE]
        return
    codings = [
        coding
        for value in response.headers.get_list("content-encoding", split_commas=True)
        if (coding := value.strip().lower()) not in ("", "identity")
    ]
    if not codings:
        async for chunk in response.aiter_raw():
            yield chunk
        return
    if len(codings) > 1 or codings[0] not in _INFLATE_BITS:
        # Its kind only, never the header's text: what an endpoint sends is not quoted.
        raise LLMProtocolError(
            f"{url} sent an answer in a content coding this client does not read: "
            f"it asks for one of {ACCEPT_ENCODING} (or none) and reads only that",
            url=url,
        )
    inflater = _Inflater(_INFLATE_BITS[codings[0]])
    async for chunk in response.aiter_raw():
        for piece in inflater.feed(chunk, url):
            yield piece
    for piece in inflater.feed(b"", url):
        yield piece


# zlib's window bits for each coding read: gzip's header, and zlib's (deflate as the standard
# says; raw deflate, as some servers send it, is tried when that header is missing).
_INFLATE_BITS = {
    "gzip": 16 + zlib.MAX_WBITS,
    "x-gzip": 16 + zlib.MAX_WBITS,
    "deflate": zlib.MAX_WBITS,
}


class _Inflater:
    """Unpack one coding in bounded steps: zlib is never asked for more than `PIECE` at once."""

    def __init__(self, wbits: int) -> None:
        self._wbits = wbits
        self._unpacker = zlib.decompressobj(wbits)
        self._started = False

    def feed(self, data: bytes, url: str) -> Iterator[bytes]:
        """Yield what `data` unpacks to (empty `data`: what is still held), piece by piece."""
        while not self._unpacker.eof:
            fed = bool(data)
            try:
                piece = self._unpacker.decompress(data, PIECE)
            except zlib.error:
                if self._started or self._wbits != zlib.MAX_WBITS:
                    raise LLMProtocolError(
                        f"{url} sent an answer whose content encoding cannot be decoded", url=url
                    ) from None
                self._unpacker, self._wbits = zlib.decompressobj(-zlib.MAX_WBITS), -1
                continue
            self._started = self._started or fed
            data = self._unpacker.unconsumed_tail
            if piece:
                yield piece
            if not data and len(piece) < PIECE:
                return


class _LineSplitter:
    """`str.splitlines` over text that arrives in pieces, as httpx's own line reader splits."""

    def __init__(self) -> None:
        self.held: list[str] = []  # the pieces of a line not ended yet
        self.held_cr = False  # a final "\r" may be half of "\r\n": it waits for the next piece

    def split(self, text: str) -> list[str]:
        """Return the lines this piece ends."""
        if self.held_cr:
            text, self.held_cr = "\r" + text, False
        if text.endswith("\r"):
            text, self.held_cr = text[:-1], True
        if not text:
            return []
        lines = text.splitlines()
        if self.held:
            lines[0] = "".join(self.held) + lines[0]
            self.held = []
        if text[-1] not in _LINE_BREAKS:
            self.held = [lines.pop()]
        return lines

    def flush(self) -> list[str]:
        """Return the last line, ended by the body's end rather than a line break."""
        if not self.held and not self.held_cr:
            return []
        line, self.held, self.held_cr = "".join(self.held), [], False
        return [line]


def too_large(url: str, limit: int) -> LLMProtocolError:
    """Return the error of an answer past its bound (what it held is not shown)."""
    return LLMProtocolError(
        f"{url} sent an answer larger than {limit // 1024:,} KiB; it was not read further",
        url=url,
    )
