"""Read JSON text from outside, turning every way Python's json refuses it into one error.

`json.loads` raises more than `JSONDecodeError` on text a JSON parser elsewhere accepts: a
number of more than `sys.get_int_max_str_digits()` digits is a plain ValueError, deep nesting a
RecursionError, and bytes that are not UTF-8 a UnicodeDecodeError. Each caller catching only
`JSONDecodeError` turned those into a 500; this is the one place that knows the whole list.

It also refuses what `json.loads` reads but nothing can keep: half of a UTF-16 surrogate pair
written as an escape (`"\\ud800"` alone), which Python holds in a str and UTF-8 cannot encode,
so storing it (SQLite, PostgreSQL) or sending it on raised UnicodeEncodeError far from here.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable
from typing import Any

# Only an escape can put a surrogate into JSON text read from bytes (UTF-8 cannot encode one):
# the value is searched only when the text holds one, whole pairs included.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE_ESCAPE_BYTES = re.compile(rb"\\u[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")
# What a path may not show as it is: NUL (no terminal or database keeps it) and surrogates.
_UNPRINTABLE = re.compile("[\x00\ud800-\udfff]")


class JSONTextError(ValueError):
    """JSON text that cannot be read; `problem` says why, without quoting the text."""

    def __init__(self, problem: str) -> None:
        self.problem = problem
        super().__init__(problem)

    @property
    def sentence(self) -> str:
        """The problem as a form's field error: capitalised, like the other field errors."""
        return self.problem[:1].upper() + self.problem[1:]


def json_read(text: str | bytes, *, unique_keys: bool = False) -> Any:
    """Return the value of JSON text; raise JSONTextError whatever the reason it is unreadable.

    With `unique_keys`, an object that names a key twice is unreadable too: JSON leaves what
    it means open (Python keeps the last, other parsers the first), so a client that wrote
    `"sandbox"` twice by mistake had the one it did not mean used, saying nothing.
    """
    try:
        value = json.loads(text, object_pairs_hook=_unique_object if unique_keys else None)
    except _DuplicateKey as exc:
        raise JSONTextError(
            f"invalid JSON: the key {exc.key!r} is given twice in one object"
        ) from None
    except json.JSONDecodeError as exc:
        raise JSONTextError(
            f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
        ) from None
    except UnicodeDecodeError:
        # Before ValueError: UnicodeDecodeError is one, and its message would quote the bytes.
        raise JSONTextError("invalid JSON: the text is not UTF-8") from None
    except RecursionError:
        raise JSONTextError("JSON nested too deeply to read") from None
    except ValueError:
        # What json raises besides the above: an integer longer than int() will read (the limit
        # Python set against CVE-2020-10735's quadratic-time conversion).
        raise JSONTextError(
            f"JSON holding a number of more than {sys.get_int_max_str_digits()} digits, "
            "too long to read"
        ) from None
    if _may_hold_surrogate(text):
        where = surrogate_where(value)
        if where is not None:
            shown = f" in '{where}'" if where else ""
            raise JSONTextError(
                f"JSON holding half of a UTF-16 surrogate pair{shown} (an escape from \\ud800 "
                "to \\udfff without its other half), which is no character: send whole characters"
            )
    return value


class _DuplicateKey(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = _shown(key)


def _unique_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    value = dict(pairs)
    if len(value) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _DuplicateKey(key)
            seen.add(key)
    return value


def json_shown(value: Any, **options: Any) -> str:
    """Return a value as JSON text to show or write: characters as they are (`ensure_ascii`
    off), except halves of UTF-16 surrogate pairs, written as their escapes.

    A value read from stored JSON text or a Python literal may hold one (the escape `\\ud800`
    reads back as one), and no page, socket or file can carry it: UTF-8 cannot encode it, so
    pretty-printing such a value made a page fail on every load. Escaped, it reads as the text
    that was sent, which is still JSON. `options` are `json.dumps`'s (indent, sort_keys).
    """
    text = json.dumps(value, ensure_ascii=False, **options)
    if _SURROGATE.search(text) is None:
        return text
    return _SURROGATE.sub(lambda m: f"\\u{ord(m[0]):04x}", text)


def surrogate_where(value: Any) -> str | None:
    """Return where half of a surrogate pair is in a JSON-like value ('tools[2]'), or None."""
    return text_where(value, _SURROGATE.search)


def _may_hold_surrogate(text: str | bytes) -> bool:
    if isinstance(text, bytes | bytearray):
        return _SURROGATE_ESCAPE_BYTES.search(text) is not None
    return _SURROGATE_ESCAPE.search(text) is not None or _SURROGATE.search(text) is not None


def text_where(value: Any, flagged: Callable[[str], Any]) -> str | None:
    """Return where the first text `flagged` picks out is in a JSON value, or None.

    Text is every string and every object's key, in the order they were written; the place is
    a path as `leaf_where` gives it.
    """
    return leaf_where(value, lambda item: isinstance(item, str) and flagged(item))


def leaf_where(value: Any, flagged: Callable[[Any], Any]) -> str | None:
    """Return where the first leaf `flagged` picks out is in a JSON value, or None.

    Leaves are every object's key (as text, before its value, as written) and every value
    that is not an object or a list; the place is a path ('task', 'tools[2]', 'a.b'; "" for
    the value itself), with any NUL or surrogate in it written as its JSON escape and cut to
    60 characters (keys are the sender's text). Walked without recursion: the value may nest
    as deep as the parser allowed.
    """
    # (item, its path, whether it is a key): a key is checked before its value, as written.
    stack: list[tuple[Any, str, bool]] = [(value, "", False)]
    while stack:
        item, path, is_key = stack.pop()
        if not is_key and isinstance(item, dict):
            for key, inner in reversed(list(item.items())):
                inner_path = f"{path}.{key}" if path else str(key)
                stack.append((inner, inner_path, False))
                stack.append((str(key), inner_path, True))
        elif not is_key and isinstance(item, list | tuple):
            stack.extend(
                (inner, f"{path}[{i}]", False) for i, inner in reversed(list(enumerate(item)))
            )
        elif flagged(item):
            return _shown(path)
    return None


def _shown(path: str) -> str:
    """Return a field's path fit to quote: unreadable characters escaped, at most 60 long."""
    path = _UNPRINTABLE.sub(lambda m: f"\\u{ord(m[0]):04x}", path)
    return path if len(path) <= 60 else path[:57] + "..."
