"""Why an import is refused: each problem with its file and line, and the refusal holding them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class ImportProblem:
    """Why a file cannot be imported: where, and what is wrong."""

    filename: str
    line: int | None
    message: str

    def __str__(self) -> str:
        where = f"{self.filename}, line {self.line}" if self.line else self.filename
        return f"{where}: {self.message}"


class ImportRefused(Exception):
    """An import was refused; nothing was written. Holds every problem found."""

    def __init__(self, problems: Sequence[ImportProblem]) -> None:
        self.problems = list(problems)
        super().__init__("\n".join(str(p) for p in self.problems))

    def __reduce__(self) -> tuple[type[ImportRefused], tuple[list[ImportProblem]]]:
        # Raised in the checker process, it comes back pickled: made again from its problems,
        # not from its message (which `Exception` would hand to `__init__`).
        return (ImportRefused, (self.problems,))
