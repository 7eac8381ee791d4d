"""What crosses between the script's process and a tool's own process, and how it is framed.

A tool with secrets of its own runs in a process of its own (`isolation.py`): its arguments
go there and its response comes back through pipes. Never pickle, whose loading runs what the
bytes say: each value is written as JSON, with every value JSON cannot say (a dict with any
keys, a tuple, a set, bytes, a date, a ToolResponse) as a one-key object naming its type. Only
plain data crosses, which is what a tool call hands over anyway (`detach.py` copies it); a
function, an iterator or an object of a tool's own is refused with a message saying what to
pass instead; an iterator crosses as the list of its items. A frame is eight hexadecimal digits of length and that many bytes.
"""

from __future__ import annotations

import base64
import datetime
import math
from collections.abc import Iterator
from typing import Any

from .refs import _encode, _json_loads, _os_read, _os_write

# Deeper than any data a script builds on purpose, and far below the interpreter's limit: the
# encoder and decoder recurse once per level.
MAX_DEPTH = 100
_LENGTH_DIGITS = 8


class Unpassable(TypeError):
    """A value that cannot be handed to (or back from) a tool's own process."""


def to_wire(value: Any, response_type: type) -> Any:
    """Return `value` as JSON data a message can carry; raise Unpassable for what cannot go."""
    return _tagged(value, response_type, 0)


def from_wire(data: Any, response_type: type) -> Any:
    """Return the value `to_wire` made `data` of; raise ValueError for what it never makes."""
    return _untagged(data, response_type, 0)


def _tagged(value: Any, response_type: type, depth: int) -> Any:
    if depth > MAX_DEPTH:
        raise Unpassable(f"the data is nested more than {MAX_DEPTH} deep (or holds itself)")
    inner = depth + 1
    kind = type(value)
    if value is None or kind in (bool, str):
        return value
    if kind is int:
        return value
    if kind is float:
        return value if math.isfinite(value) else {"x": repr(value)}
    if isinstance(value, response_type):
        return {"r": [value.success, _tagged(value.message, response_type, inner),
                      _tagged(value.data, response_type, inner)]}  # fmt: skip
    # Subclasses (a flag, an OrderedDict, a named tuple) cross as their plain base value, as
    # `detach.py` hands them over.
    if isinstance(value, bool):
        return bool(value)
    for base in (str, int, float):
        if isinstance(value, base):
            return _tagged(base(value), response_type, depth)
    if isinstance(value, dict):
        return {"d": [[_tagged(k, response_type, inner), _tagged(v, response_type, inner)]
                      for k, v in value.items()]}  # fmt: skip
    if isinstance(value, list) or kind in _VIEWS:
        return [_tagged(item, response_type, inner) for item in value]
    for tag, container in (("t", tuple), ("s", set), ("f", frozenset)):
        if isinstance(value, container):
            return {tag: [_tagged(item, response_type, inner) for item in value]}
    if isinstance(value, bytes):
        return {"b": base64.b64encode(value).decode("ascii")}
    if isinstance(value, complex):
        return {"c": [repr(value.real), repr(value.imag)]}
    if isinstance(value, datetime.datetime):
        return {"dt": value.isoformat()}
    if isinstance(value, datetime.date):
        return {"da": value.isoformat()}
    if isinstance(value, datetime.time):
        return {"ti": value.isoformat()}
    if isinstance(value, datetime.timedelta):
        return {"td": [value.days, value.seconds, value.microseconds]}
    if isinstance(value, range):
        return {"rg": [value.start, value.stop, value.step]}
    if isinstance(value, Iterator):
        # Read in full on this side: a lazy `map` a script hands such a tool runs its code
        # before the call, in the script's own process, never in the tool's.
        return [_tagged(item, response_type, inner) for item in value]
    raise Unpassable(
        f"a {kind.__name__} cannot be passed to or from a tool that runs in a process of its "
        "own (it holds secrets of its own): pass plain data (text, numbers, lists, dicts, "
        "tuples, sets, bytes, dates)"
    )


_VIEWS = (type({}.keys()), type({}.values()), type({}.items()))


def _untagged(value: Any, response_type: type, depth: int) -> Any:
    if depth > MAX_DEPTH:
        raise ValueError("a frame nested deeper than any encoder writes")
    inner = depth + 1
    if isinstance(value, list):
        return [_untagged(item, response_type, inner) for item in value]
    if not isinstance(value, dict):
        return value
    if len(value) != 1:
        raise ValueError("a frame object that is not one tagged value")
    ((tag, body),) = value.items()
    if tag == "d":
        return {_untagged(k, response_type, inner): _untagged(v, response_type, inner)
                for k, v in body}  # fmt: skip
    if tag in _CONTAINERS:
        return _CONTAINERS[tag](_untagged(item, response_type, inner) for item in body)
    if tag == "r":
        success, message, data = body
        return response_type(
            success=success,
            message=_untagged(message, response_type, inner),
            data=_untagged(data, response_type, inner),
        )
    if tag in _SCALARS:
        return _SCALARS[tag](body)
    raise ValueError(f"a frame value of unknown type {tag!r}")


_CONTAINERS: dict[str, type] = {"t": tuple, "s": set, "f": frozenset}
_SCALARS: dict[str, Any] = {
    "x": float,
    "b": lambda text: base64.b64decode(text, validate=True),
    "c": lambda parts: complex(float(parts[0]), float(parts[1])),
    "dt": datetime.datetime.fromisoformat,
    "da": datetime.date.fromisoformat,
    "ti": datetime.time.fromisoformat,
    "td": lambda parts: datetime.timedelta(days=parts[0], seconds=parts[1], microseconds=parts[2]),
    "rg": lambda parts: range(*parts),
}


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def frame(message: dict[str, Any]) -> bytes:
    """Return a message (a JSON object) as one frame: its length, then its body."""
    body = _encode(message).encode("ascii")
    if len(body) >= 16**_LENGTH_DIGITS:
        raise Unpassable(f"a message of {len(body)} bytes is more than a frame holds")
    return b"%08x" % len(body) + body


def send(fd: int, message: dict[str, Any]) -> None:
    """Write one message to a pipe, whole."""
    view = memoryview(frame(message))
    while view:
        view = view[_os_write(fd, view) :]


def receive(fd: int) -> dict[str, Any] | None:
    """Read one message from a pipe; None when the writer is gone or wrote no message."""
    head = read_exactly(fd, _LENGTH_DIGITS)
    if head is None or not all(c in b"0123456789abcdef" for c in head):
        return None
    body = read_exactly(fd, int(head, 16))
    if body is None:
        return None
    try:
        message = _json_loads(body, parse_constant=_refuse_constant)
    except (ValueError, RecursionError):
        return None
    return message if isinstance(message, dict) else None


def read_exactly(fd: int, count: int) -> bytes | None:
    """Read exactly `count` bytes from a pipe; None when the writer is gone before."""
    # Exactly: a frame's reader must never take a byte of the next one, which may be meant for
    # another process reading the same pipe after it (`isolation.py`'s secrets).
    chunks: list[bytes] = []
    while count:
        chunk = _os_read(fd, min(count, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        count -= len(chunk)
    return b"".join(chunks)
