"""Whether bubblewrap can make a sandbox here, and the error when a piece of one cannot be built."""

from __future__ import annotations

import shutil
import subprocess

from ..errors import SandboxError


class BwrapUnavailable(SandboxError):
    """A piece of the bubblewrap sandbox (seccomp, /usr layout) cannot be built here."""


def bwrap_available() -> tuple[bool, str]:
    """Tell whether bubblewrap can create its namespaces here, and why not."""
    if shutil.which("bwrap") is None:
        return False, "bwrap is not installed (apt-get install bubblewrap)"
    probe = subprocess.run(
        ["bwrap", "--unshare-all", "--as-pid-1", "--ro-bind", "/usr", "/usr",
         "--symlink", "usr/bin", "/bin", "--symlink", "usr/lib", "/lib",
         "--symlink", "usr/lib64", "/lib64", "--", "/bin/true"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    if probe.returncode != 0:
        return False, f"bwrap cannot create namespaces here: {probe.stderr.strip()}"
    return True, "ok"
