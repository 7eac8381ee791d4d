"""No codec name, however a script spells it, makes the sandbox import a module.

Looking a codec up imports its module the first time (encodings' search function), so a codec
name was a way to make the worker import while the script ran: refused by the audit hook,
which failed every codec not loaded yet and answered a misspelt name with a SandboxViolation
instead of Python's LookupError. Now every standard codec is loaded before the script runs
and the search answers from those alone (harness/textcodecs.py): each spelling of a real
codec (case, hyphens, spaces, dots, aliases) finds it, as outside the sandbox, and every
other name (paths, dotted and module names, the encodings package's own files that are not
codecs, Windows-only codecs) is an unknown encoding, with nothing imported.
"""

from __future__ import annotations

import encodings
import encodings.aliases
import os

from jazzmine.core.tools import validate_script
from jazzmine.sandbox import Outcome, RunLimits

from .both_backends import sandbox
from .bwrap_support import runtime_dir
from .helpers import final, of_type
from .sample_tools import TEST_SANDBOX, make_registry

__all__ = ["runtime_dir", "sandbox"]  # the fixtures, used by name

LIMITS = RunLimits(memory_mb=256, pids_limit=32, timeout_seconds=30, max_output_bytes=2_000_000)

# Names of no codec: paths, modules (the tools' and the harness's too), files of the encodings
# package that are not codecs, and codecs of Windows alone.
ATTEMPTS = [
    "../../etc/passwd", "/usr/lib/python3.11/os", "encodings.idna", "encodings/idna",
    "idna/../utf_8", "utf_8/../../tools/add", "__init__", "__pycache__", "aliases", "os",
    "subprocess", "site", "tools", "tools.add", "add", "harness", "jazzmine",
    "jazzmine.sandbox.harness.main", "textcodecs", "mbcs", "oem", "dbcs", ".", "..", "", " ",
    "ｕｔｆ８",
]  # fmt: skip
# Odder still, answered as Python answers them: ValueError, and utf-8 (the zero-width space
# is punctuation to encodings' normalisation).
ODD = ["utf-8\x00", "utf\u200b8"]


def spellings() -> list[str]:
    """Every alias and codec module name of the standard library, spelt several ways."""
    modules = {e.partition(".")[0] for e in os.listdir(os.path.dirname(encodings.__file__))}
    names: set[str] = set()
    for name in sorted(set(encodings.aliases.aliases) | modules):
        names |= {name, name.upper(), name.title(), name.replace("_", "-"),
                  name.replace("_", " "), name.replace("_", "."), f" {name} "}  # fmt: skip
    return sorted(names) + ATTEMPTS + ODD


NAMES = spellings()

ENCODE_EACH = f"""
out = []
for name in {NAMES!r}:
    try:
        out.append("é".encode(name).hex())
    except LookupError:
        out.append("LookupError")
    except UnicodeError:
        out.append("UnicodeError")
    except Exception as exc:
        out.append("refused: " + str(exc))
emit_result(out)
"""

# Test-only, with real builtins: what the codec search imports, seen from inside the worker.
LOOK_EACH_UP = f"""
import codecs, sys
before = set(sys.modules)
for name in {NAMES!r}:
    try:
        codecs.lookup(name)
    except (LookupError, ValueError):
        pass
emit_result(sorted(set(sys.modules) - before))
"""


def encoded_outside(name: str) -> str:
    """What ENCODE_EACH records for one name outside any sandbox."""
    try:
        return "é".encode(name).hex()
    except LookupError:
        return "LookupError"
    except UnicodeError:
        return "UnicodeError"
    except Exception as exc:
        return "refused: " + str(exc)


async def test_each_spelling_finds_the_codec_python_finds_or_none(sandbox):
    assert validate_script(ENCODE_EACH, make_registry().tool_names(TEST_SANDBOX)) == []
    events = await sandbox.run(ENCODE_EACH, LIMITS)
    assert final(events).outcome is Outcome.RESULT, events
    seen = dict(zip(NAMES, of_type(events, "result")[0].data, strict=True))
    differ = {n: (seen[n], encoded_outside(n)) for n in NAMES if seen[n] != encoded_outside(n)}
    assert differ == {}
    assert {seen[name] for name in ATTEMPTS} == {"LookupError"}  # never a refused import
    assert [seen[name] for name in ODD] == ["refused: embedded null character", "c3a9"]


async def test_looking_each_spelling_up_imports_nothing(sandbox):
    events = await sandbox.run(LOOK_EACH_UP, LIMITS, unrestricted=True)
    assert final(events).outcome is Outcome.RESULT, events
    assert of_type(events, "result")[0].data == []
