"""Deployment bounds of a sandbox's numbers: forms refuse outside them, runs clamp to them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.conf import settings


@dataclass(frozen=True)
class Bound:
    """The smallest and largest value a sandbox field may hold."""

    minimum: float
    maximum: float

    def clamp(self, value: Any) -> Any:
        """Return the value moved inside the bound, keeping its type."""
        kind = type(value) if isinstance(value, (int, float)) else float
        return kind(min(max(value, self.minimum), self.maximum))

    def problem(self, label: str, value: Any) -> str | None:
        """Return why a value is out of bounds, or None when it is inside."""
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return f"{label} must be a number, not {value!r}"
        if value != value or not self.minimum <= value <= self.maximum:  # NaN fails too
            return f"{label} must be between {number_text(self.minimum)} and {number_text(self.maximum)}"
        return None


def number_text(value: float) -> str:
    """Write a bound as a person types it: 52428800 and 0.05, never 5.24288e+07."""
    return str(int(value)) if float(value).is_integer() else str(value)


# Minima are fixed: below them no run can start. Maxima are the operator's (settings).
_MINIMA = {
    "memory_mb": 32,
    "cpus": 0.05,
    "pids_limit": 8,
    "timeout_seconds": 0.5,
    "max_output_bytes": 1000,
    "bash_max_commands": 1,
    "bash_max_loop_iterations": 1,
    "bash_timeout_seconds": 0.5,
    "script_timeout_seconds": 0.5,
}
_MAXIMA_SETTINGS = {
    "memory_mb": "JAZZMINE_MAX_SANDBOX_MEMORY_MB",
    "cpus": "JAZZMINE_MAX_SANDBOX_CPUS",
    "pids_limit": "JAZZMINE_MAX_SANDBOX_PIDS",
    "timeout_seconds": "JAZZMINE_MAX_SANDBOX_TIMEOUT_SECONDS",
    "max_output_bytes": "JAZZMINE_MAX_SANDBOX_OUTPUT_BYTES",
    "bash_max_commands": "JAZZMINE_MAX_BASH_COMMANDS",
    "bash_max_loop_iterations": "JAZZMINE_MAX_BASH_LOOP_ITERATIONS",
    "bash_timeout_seconds": "JAZZMINE_MAX_BASH_TIMEOUT_SECONDS",
    "script_timeout_seconds": "JAZZMINE_MAX_SCRIPT_TOOL_TIMEOUT_SECONDS",
}


def bound(name: str) -> Bound:
    """Return the bound of one field, read from settings now (tests override them)."""
    return Bound(_MINIMA[name], float(getattr(settings, _MAXIMA_SETTINGS[name])))


def bounds_problems(values: dict[str, Any]) -> dict[str, str]:
    """Return {field: why} for the bounded fields among `values` that are out of bounds."""
    problems = {}
    for name, value in values.items():
        if name in _MINIMA and value is not None:
            problem = bound(name).problem(name, value)
            if problem:
                problems[name] = problem
    return problems


def clamped(name: str, value: Any) -> Any:
    """Return a stored value inside its bound: the second wall behind the forms."""
    return bound(name).clamp(value)
