"""Check that a script imports only the standard library and what tool.json declares."""

from __future__ import annotations

import re
import sys

from .registry import Outcome, Registry
from .subject import Subject

CHECKS = Registry()

_NODE_BUILTINS = frozenset(
    """assert buffer child_process crypto dns events fs http https net os path process
    querystring readline stream string_decoder timers tls url util zlib worker_threads""".split()  # noqa: SIM905
)


def _normalise(name: str) -> str:
    """Reduce a requirement or module to a comparable name: `Foo-Bar>=1` -> `foo_bar`."""
    return re.split(r"[<>=!~\[; ]", name.strip(), maxsplit=1)[0].lower().replace("-", "_")


@CHECKS.register(
    "imports_available",
    "imports are standard library or declared dependencies",
    needs_manifest=False,
    needs_script=True,
)
def imports_available(subject: Subject) -> Outcome:
    """Pass when every import is built in or declared (none are when tool.json is unread)."""
    scan = subject.scan
    declared = {_normalise(d) for d in subject.dependencies}
    known = set(sys.stdlib_module_names) if scan.runtime == "python3" else set(_NODE_BUILTINS)
    missing = sorted(
        f"{m} (line {line})"
        for m, line in scan.imports.items()
        if m not in known and _normalise(m) not in declared
    )
    if missing:
        return False, (
            f"third-party import(s) not declared in tool.json dependencies: {', '.join(missing)}; "
            "prefer the standard library"
        )
    return True, "ok"
