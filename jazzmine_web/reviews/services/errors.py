"""What a review action raises when it cannot happen; `code` and `status` are for the API."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import ParamSpec, TypeVar

from ...studio.checker import CheckerUnavailable

P = ParamSpec("P")
T = TypeVar("T")


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
    """The script reaches tools the reviewer was not shown, or not asked about; nothing approved.

    `appeared`: tools the page did not list. `no_longer_allowed`: tools it showed as always
    allowed that need review now. `unasked`: tools that need review which the page may not
    have asked about: its form sent no list of the tools it asked about, and no reading the
    server stored says (a tool only a reviewer's edit calls). `recoded`: tools whose code
    changed after the page read them (an approval covers the code it was decided on).
    """

    code_name = "tools_changed"

    def __init__(
        self,
        *,
        appeared: list[str],
        no_longer_allowed: list[str],
        unasked: list[str] | None = None,
        recoded: list[str] | None = None,
    ) -> None:
        self.appeared = appeared
        self.no_longer_allowed = no_longer_allowed
        self.unasked = unasked or []
        self.recoded = recoded or []
        super().__init__(self.code_name, self.explained())

    def explained(self) -> str:
        """Say what the reviewer was not shown or asked, and that they must look again."""
        found = []
        if self.appeared:
            found.append(
                f"it now calls, or may call, {', '.join(self.appeared)}, which the list of "
                "tools you saw did not show"
            )
        found.extend(self._not_asked())
        return (
            "The sandbox's tools changed since this script was read: "
            + "; ".join(found)
            + ". The list of tools it calls is read again; check it, then approve again."
        )

    def _not_asked(self) -> list[str]:
        found = []
        if self.no_longer_allowed:
            verb = "is" if len(self.no_longer_allowed) == 1 else "are"
            found.append(f"{', '.join(self.no_longer_allowed)} {verb} no longer always allowed")
        if self.unasked:
            verb = "needs" if len(self.unasked) == 1 else "need"
            found.append(
                f"{', '.join(self.unasked)} {verb} a person's review, and the approval did "
                "not say which tools you were asked about"
            )
        if self.recoded:
            verb = "was" if len(self.recoded) == 1 else "were"
            found.append(f"the code of {', '.join(self.recoded)} {verb} changed since")
        return found


class ScriptUnchecked(ReviewError):
    """The checker process could not read the script (it stopped, or ran out of time).

    Nothing was submitted, decided or run: the action's writes are undone with it.
    """

    status = 503

    def __init__(self, message: str) -> None:
        super().__init__("script_unchecked", message)


def refused_unless_checked(action: Callable[P, T]) -> Callable[P, T]:
    """Make a review action that reads a script refuse, as a `ReviewError`, one left unread.

    A big script is read in the checker process (`studio.checker`); when that cannot answer,
    the action fails closed, and the API and the pages show why as they show any refusal.
    """

    @functools.wraps(action)
    def refusing(*args: P.args, **kwargs: P.kwargs) -> T:
        try:
            return action(*args, **kwargs)
        except CheckerUnavailable as exc:
            raise ScriptUnchecked(str(exc)) from exc

    return refusing
