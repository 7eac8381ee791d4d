"""Copy what crosses between a script and a tool, so neither keeps a hold on the other's data.

A tool is trusted code that enforces its own rules (a price, a limit, who may be refunded),
and may keep state between calls: a cache, a module-level table, a mutable default. Handed
its own objects, a script could change that state: edit the dict a tool returned from its
cache (`first.data["item"]["max_qty"] = 10**6`) and the next call reads the edit; or hand a
tool a list it stores and change the list after the tool checked it. Every value that crosses
is therefore a copy: the arguments on the way in, the response on the way out.

An allow-list, not "copy the containers and pass the rest": anything that can hold a
container and is passed as it is hands it over live. So:

- plain values that cannot change (text, numbers, bytes, None, ranges, dates and times,
  compiled patterns and their matches) pass as they are;
- dicts, lists, tuples, sets and frozensets are copied, their items too (cycles and shared
  parts once, as `copy.deepcopy` does; a subclass by its own deep copy);
- a dict's keys, values or items view becomes a list of copies (a view shows later edits);
- an iterator (a lazy `map`, a generator) stays lazy and yields a copy of each item, so a
  script's code may still run inside a tool's call, as plain Python allows;
- a ToolResponse is copied field by field;
- anything else (a function, an exception, a slice, an object of the tool's own) is refused:
  `Uncopyable`, which the caller turns into a failed response saying what to pass instead.

Nesting past the interpreter's limit raises RecursionError; the caller refuses the call.
"""

from __future__ import annotations

import copy
import datetime
import re
from collections.abc import Iterator
from typing import Any

_SCALARS = (str, int, float, bool, bytes, complex, type(None))
_AS_THEY_ARE = (
    range, datetime.date, datetime.time, datetime.timedelta, datetime.tzinfo, re.Pattern, re.Match,
)  # fmt: skip
_VIEWS = (type({}.keys()), type({}.values()), type({}.items()))
_CONTAINERS = (dict, list, tuple, set, frozenset)


class Uncopyable(TypeError):
    """A value that cannot be handed across a tool call as a copy."""


class Detacher:
    """Copy values across a tool call; `response_type` is the run's ToolResponse class."""

    def __init__(self, response_type: type) -> None:
        self.response_type = response_type

    def copied(self, value: Any, memo: dict[int, Any] | None = None) -> Any:
        """Return a copy of `value` that shares nothing mutable with it; raise Uncopyable."""
        kind = type(value)
        if kind in _SCALARS or isinstance(value, _AS_THEY_ARE):
            return value
        for base in (str, int, float, bytes, complex):
            if isinstance(value, base):  # a subclass (a flag, a tool's own): its plain value
                return base(value)
        memo = {} if memo is None else memo
        seen = memo.get(id(value))
        if seen is not None:
            return seen
        if kind is dict:
            fresh: Any = {}
            memo[id(value)] = fresh
            for key, item in value.items():
                fresh[self.copied(key, memo)] = self.copied(item, memo)
            return fresh
        if kind is list:
            fresh = []
            memo[id(value)] = fresh
            fresh.extend(self.copied(item, memo) for item in value)
            return fresh
        if kind in (tuple, set, frozenset):
            # Built from their copied parts: a cycle through one of them reaches it only
            # through a list or a dict, which is in the memo already.
            fresh = kind(self.copied(item, memo) for item in value)
            memo[id(value)] = fresh
            return fresh
        if isinstance(value, _CONTAINERS):  # a subclass (OrderedDict, a named tuple)
            fresh = copy.deepcopy(value, memo)
            memo[id(value)] = fresh
            return fresh
        if kind in _VIEWS:
            return [self.copied(item, memo) for item in value]
        if isinstance(value, self.response_type):
            return self.response(value)
        if isinstance(value, Iterator):
            return self._lazily_copied(value)
        raise Uncopyable(
            f"a {kind.__name__} cannot be handed across a tool call: pass plain data (text, "
            "numbers, lists, dicts) or an iterator of it"
        )

    def response(self, response: Any) -> Any:
        """Return a copy of a ToolResponse: every field (a message may be any object too)."""
        fresh = copy.copy(response)  # the same fields, checked once already by the tool's own
        fresh.message = self.copied(response.message)
        fresh.data = self.copied(response.data)
        return fresh

    def _lazily_copied(self, iterator: Iterator[Any]) -> Iterator[Any]:
        for item in iterator:
            yield self.copied(item)
