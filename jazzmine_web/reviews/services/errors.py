"""What a review action raises when it cannot happen; `code` and `status` are for the API."""

from __future__ import annotations


class ReviewError(Exception):
    """A review action that cannot happen; `code` is stable for the API and the tests."""

    status = 400

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class SubmissionInvalid(ReviewError):
    """A submission request with a missing or bad field."""


class ReviewForbidden(ReviewError):
    """The person (or token) may not make this decision."""

    status = 403


class ReviewConflict(ReviewError):
    """The submission is no longer waiting for a decision."""

    status = 409


class EditRefused(ReviewError):
    """A reviewer's edit breaks the validator's rules; nothing was approved."""

    def __init__(self, violations: list[str]) -> None:
        super().__init__("edit_has_violations", "; ".join(violations))
        self.violations = violations


class ToolsChanged(ReviewConflict):
    """The script reaches tools the reviewer was not shown (they changed since it was read)."""

    def __init__(self, *, appeared: list[str], no_longer_allowed: list[str]) -> None:
        found = []
        if appeared:
            found.append(
                f"it now calls, or may call, {', '.join(appeared)}, which the list of tools "
                "you saw did not show"
            )
        if no_longer_allowed:
            verb = "is" if len(no_longer_allowed) == 1 else "are"
            found.append(f"{', '.join(no_longer_allowed)} {verb} no longer always allowed")
        super().__init__(
            "tools_changed",
            "The sandbox's tools changed since this script was read: "
            + "; ".join(found)
            + ". The list of tools it calls is read again; check it, then approve again.",
        )
        self.appeared = appeared
        self.no_longer_allowed = no_longer_allowed
