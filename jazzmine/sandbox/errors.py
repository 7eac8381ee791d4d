"""Errors the sandbox layer raises to its callers."""

from __future__ import annotations


class SandboxError(Exception):
    """Base class of sandbox failures."""


class BuildError(SandboxError):
    """An image build failed: says at which step, for which package, and why."""

    def __init__(
        self,
        *,
        step: str,
        message: str,
        package: str | None = None,
        log_tail: list[str] | None = None,
    ) -> None:
        self.step = step
        self.package = package
        self.log_tail = list(log_tail or [])
        where = f"{step} ({package})" if package else step
        super().__init__(f"build failed at {where}: {message}")


class UnrestrictedRefused(SandboxError):
    """A request asked for unrestricted builtins from a runner that does not allow them."""


class SandboxStale(SandboxError):
    """A ready sandbox runs an image its tag no longer names: another must serve the run.

    Raised by a caller's vetting of the sandbox a run is about to get (`Vet`), never once
    anything of the run went in.
    """
