"""How a script tool's script is started: as `python3 script.py` or `node script.js` would.

A Python script tool imports its dependencies, and the sandbox's, from the image's `site/`,
where the build unpacked every wheel; the harness puts it on its own path, but a script tool
runs in a process of its own, whose path had no `site/`: no script tool could import what it
declared. Its python3 starts the script through `PYTHON_START`, which puts `site/` where the
harness does (`harness.worker.site_position`): after the standard library, never ahead of it
(a wheel's module named like one of the standard library's would replace it), and ahead of
the interpreter's own packages (the sandbox's pinned versions win over the base image's).
Self-contained, since it runs where nothing of the host is importable.
"""

from __future__ import annotations

# Both backends mount the runtime here (`sandbox.builder.RUNTIME_DIR`, `bwrap.RUNTIME_MOUNT`).
SITE_DIR = "/opt/jazzmine/site"

# An error's traceback starts at the script, as `python3 script.py` would print it: the frames
# of this starter and of runpy above it are left out (they told the tool's author nothing).
PYTHON_START = f"""\
import os, runpy, sys
script = sys.argv[1]
del sys.argv[0]
sys.path[0] = os.path.dirname(script)
at = next((i for i, entry in enumerate(sys.path)
           if os.path.basename(entry.rstrip(os.sep)) in ("site-packages", "dist-packages")),
          len(sys.path))
sys.path.insert(at, {SITE_DIR!r})
del at, script
def _from_the_script(kind, error, tb, starter=("<string>", "<frozen runpy>", runpy.__file__)):
    while tb is not None and tb.tb_frame.f_code.co_filename in starter:
        tb = tb.tb_next
    sys.__excepthook__(kind, error.with_traceback(tb), tb)
sys.excepthook = _from_the_script
runpy.run_path(sys.argv[0], run_name="__main__")
"""


def script_command(runtime: str, exe: str, path: str) -> list[str]:
    """Return the command that runs a script tool's file with the interpreter at `exe`."""
    if runtime == "python3":
        return [exe, "-c", PYTHON_START, path]
    return [exe, path]
