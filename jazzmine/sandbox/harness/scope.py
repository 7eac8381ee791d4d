"""What a script sees besides tools and emit helpers: restricted builtins and module views."""

from __future__ import annotations

import builtins
import datetime
import json
import math
import re
import sys
import time
import types
from typing import Any

from .channel import Emitters
from .guards import GUARD_DEL, GUARD_GET, GUARD_SET, Guards, SandboxViolation
from .refs import _real_type

# Modules that C functions a script may call import lazily through its builtins, loaded
# before the script runs: `datetime.strptime` imports `_strptime`; the `namereplace` error
# handler and the unicode_escape codec's `\N{...}` import `unicodedata` for its name table.
# The codecs' own modules are loaded with every other codec of the standard library
# (`textcodecs`): encodings imports them through the real builtins, never through these.
LAZY_IMPORTS: frozenset[str] = frozenset({"_strptime", "time", "unicodedata"})


def restricted_builtins(safety: Any, emitters: Emitters, guards: Guards) -> dict[str, Any]:
    """Build the builtins of a script from the shared safe list, with guarded introspection."""
    names = safety.runtime_names()
    table = {n: getattr(builtins, n) for n in names if hasattr(builtins, n)}

    def guarded_type(*args: Any) -> Any:
        if len(args) != 1:
            raise SandboxViolation("type() takes exactly one argument in the sandbox")
        found = _real_type(args[0])
        # `type(type(x))` is the class factory: hand back this guard instead.
        return guarded_type if issubclass(found, _real_type) else found

    def guarded_import(
        name: Any, _globals: Any = None, _locals: Any = None, fromlist: Any = None, level: Any = 0
    ) -> Any:
        # C code imports through the caller's builtins (datetime.strptime -> _strptime), always
        # as `__import__(name, g, g, [], 0)`: hand out only those modules, already loaded, and
        # only to that call. An import statement passes None or a tuple of names, which would
        # read the names off the real module unchecked.
        if (
            name in LAZY_IMPORTS
            and name in sys.modules
            and type(fromlist) is list
            and not fromlist
            and level == 0
        ):
            return sys.modules[name]
        raise ImportError(f"__import__ of {name!r} is refused in the sandbox")

    table["__import__"] = guarded_import
    if "getattr" in table:
        table["getattr"] = guards.get
    if "hasattr" in table:
        table["hasattr"] = guards.has
    if "type" in table:
        table["type"] = guarded_type
    table["print"] = emitters.print
    table[GUARD_GET] = guards.get
    table[GUARD_SET] = guards.set
    table[GUARD_DEL] = guards.delete
    return table


def module_views(safety: Any) -> dict[str, types.SimpleNamespace]:
    """Give the script copies of the pre-imported modules holding only the allowed names."""
    real = {"json": json, "time": time, "math": math, "re": re, "datetime": datetime}
    views = {}
    for name, allowed in safety.PREIMPORTED_MODULES.items():
        module = real[name]
        attrs = {a: getattr(module, a) for a in sorted(allowed) if hasattr(module, a)}
        # A namespace, not the module: rebinding `json.dumps` only changes the script's copy.
        views[name] = types.SimpleNamespace(**attrs)
    return views
