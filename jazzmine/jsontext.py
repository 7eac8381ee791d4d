"""Read JSON text from outside, turning every way Python's json refuses it into one error.

`json.loads` raises more than `JSONDecodeError` on text a JSON parser elsewhere accepts: a
number of more than `sys.get_int_max_str_digits()` digits is a plain ValueError, deep nesting a
RecursionError, and bytes that are not UTF-8 a UnicodeDecodeError. Each caller catching only
`JSONDecodeError` turned those into a 500; this is the one place that knows the whole list.
"""

from __future__ import annotations

import json
import sys
from typing import Any


class JSONTextError(ValueError):
    """JSON text that cannot be read; `problem` says why, without quoting the text."""

    def __init__(self, problem: str) -> None:
        self.problem = problem
        super().__init__(problem)

    @property
    def sentence(self) -> str:
        """The problem as a form's field error: capitalised, like the other field errors."""
        return self.problem[:1].upper() + self.problem[1:]


def json_read(text: str | bytes) -> Any:
    """Return the value of JSON text; raise JSONTextError whatever the reason it is unreadable."""
    try:
        return json.loads(text)
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
