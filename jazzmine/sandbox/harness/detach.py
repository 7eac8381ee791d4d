"""Copy what crosses between a script and a tool, so neither keeps a hold on the other's data.

A tool is trusted code that enforces its own rules (a price, a limit, who may be refunded),
and may keep state between calls: a cache, a module-level table, a mutable default. Handed
its own objects, a script could change that state: edit the dict a tool returned from its
cache (`first.data["item"]["max_qty"] = 10**6`) and the next call reads the edit; or hand a
tool a list it stores and change the list after the tool checked it. Every container that
crosses is therefore a copy: the arguments on the way in, the response on the way out.

Only containers are copied (dict, list, tuple, set, frozenset and their subclasses):
everything else a script can hold is immutable to it (the validator refuses every attribute
store) or an iterator it hands on for the tool to consume (a lazy `map`), which is passed as
it is. Cycles and shared parts are copied once, as `copy.deepcopy` does; nesting past the
interpreter's limit is refused by the caller as data no tool should take.
"""

from __future__ import annotations

import copy
from typing import Any

_SCALARS = (str, int, float, bool, bytes, complex, type(None))


def detached(value: Any, _memo: dict[int, Any] | None = None) -> Any:
    """Return `value` with every container in it copied (shared parts once, cycles kept)."""
    kind = type(value)
    if kind in _SCALARS:
        return value
    memo = {} if _memo is None else _memo
    seen = memo.get(id(value))
    if seen is not None:
        return seen
    if kind is dict:
        copied: Any = {}
        memo[id(value)] = copied
        for key, item in value.items():
            copied[detached(key, memo)] = detached(item, memo)
        return copied
    if kind is list:
        copied = []
        memo[id(value)] = copied
        copied.extend(detached(item, memo) for item in value)
        return copied
    if kind in (tuple, set, frozenset):
        # Immutable (or unordered) shells: built from their copied parts, a cycle through
        # one of them reaches it only through a list or a dict, which is in the memo already.
        copied = kind(detached(item, memo) for item in value)
        memo[id(value)] = copied
        return copied
    if isinstance(value, (dict, list, tuple, set, frozenset)):
        # A subclass (OrderedDict, a named tuple, defaultdict): its own copy keeps its type.
        copied = copy.deepcopy(value, memo)
        memo[id(value)] = copied
        return copied
    return value


def response_detached(response: Any, response_type: type) -> Any:
    """Return a tool's response with its data copied; anything else a tool returned, copied."""
    if not isinstance(response, response_type):
        return detached(response)
    fresh = copy.copy(response)  # the same fields, checked once already by the tool's own
    fresh.data = detached(response.data)
    return fresh
