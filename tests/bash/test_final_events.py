"""A bash run's stdout is shown as JSON only when an event can carry it; any other text,
however hostile, is shown as text and the run ends as its exit code says."""

from __future__ import annotations

import pytest

from jazzmine.bash.engine import BashResult
from jazzmine.bash.events import bash_final_events
from jazzmine.sandbox import Outcome
from jazzmine.sandbox.events import check_data


def _final(stdout: str, exit_code: int = 0) -> tuple[dict, str]:
    result = BashResult(stdout=stdout, stderr="", exit_code=exit_code, error=None, calls=[],
                        duration_ms=1.0)  # fmt: skip
    events = dict(bash_final_events(result))
    return events["result"], events["exit"]["outcome"]


TEXTS = {
    "nested past the recursion limit": "[" * 50_000 + "]" * 50_000,
    "nested past the events' bound": "[" * 70 + "]" * 70,
    "NaN": "NaN",
    "a list holding Infinity": "[1, -Infinity]",
    "a 5000-digit number": "7" * 5000,
    "an integer past JSON-safe range": "[9007199254740993]",
    "a lone surrogate": '"\\ud800"',
    "not JSON": "done: 3 orders",
}


@pytest.mark.parametrize("name", sorted(TEXTS))
def test_stdout_an_event_cannot_carry_is_text(name: str) -> None:
    data, outcome = _final(TEXTS[name])
    assert "json" not in data
    assert data["stdout"] == TEXTS[name]
    assert outcome == Outcome.RESULT.value
    check_data(data)  # what is sent and stored keeps the events' bounds


def test_stdout_that_is_json_is_carried_as_json() -> None:
    data, outcome = _final('{"total": 12, "ids": [1, 2]}\n')
    assert data["json"] == {"total": 12, "ids": [1, 2]}
    assert outcome == Outcome.RESULT.value


@pytest.mark.parametrize(
    ("stdout", "error", "lost"),
    [("", "maximum command count exceeded (10000)", True), ("", None, False),
     ("partial\n", "execution timeout (1s)", False)],
)  # fmt: skip
def test_a_stopped_script_with_no_stdout_says_its_output_is_lost(stdout, error, lost) -> None:
    # bashkit returns no stdout of a script it stops: "(no output)" hid what it had printed.
    result = BashResult(stdout=stdout, stderr="", exit_code=1 if error else 0, error=error)
    data = dict(bash_final_events(result))["result"]
    assert data.get("output_lost", False) is lost
    check_data(data)
