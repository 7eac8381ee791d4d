"""Checks of the checklist: each one's id, title and function kept together, in report order."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .subject import Subject

Outcome = tuple[bool, str]
Judge = Callable[["Subject"], Outcome]


@dataclass(frozen=True)
class Check:
    """One checklist item: its id, the title a reader sees and the function that judges it."""

    id: str
    title: str
    judge: Judge
    # Items that read tool.json or the script's static reading say "not checked" when it failed.
    needs_manifest: bool = True
    needs_script: bool = False


class Registry:
    """Hold checks in the order the report lists them, each id once."""

    def __init__(self, checks: Iterable[Check] = ()) -> None:
        """Start with the given checks, in order."""
        self._checks: dict[str, Check] = {}
        for check in checks:
            self.add(check)

    @classmethod
    def join(cls, *registries: Registry) -> Registry:
        """Return one registry holding the checks of several, in the order given."""
        return cls(check for registry in registries for check in registry)

    def add(self, check: Check) -> None:
        """Append a check, refusing an id already taken."""
        if check.id in self._checks:
            raise ValueError(f"check {check.id!r} is registered twice")
        self._checks[check.id] = check

    def register(
        self, check_id: str, title: str, *, needs_manifest: bool = True, needs_script: bool = False
    ) -> Callable[[Judge], Judge]:
        """Register the decorated function as the check `check_id` titled `title`."""

        def decorate(judge: Judge) -> Judge:
            self.add(Check(check_id, title, judge, needs_manifest, needs_script))
            return judge

        return decorate

    def titles(self) -> dict[str, str]:
        """Return each check's title by its id, in report order."""
        return {check.id: check.title for check in self}

    def __getitem__(self, check_id: str) -> Check:
        return self._checks[check_id]

    def __iter__(self) -> Iterator[Check]:
        return iter(self._checks.values())

    def __len__(self) -> int:
        return len(self._checks)
