"""A script's output that is JSON Python cannot read or write back (nested past the recursion
limit, a number longer than int() reads) is shown as the text it is, never a 500."""

from __future__ import annotations

import pytest

from jazzmine.scripttools.lint.subject import load_tool_json
from jazzmine_web.runs.selectors import result_view
from jazzmine_web.scripttools.selectors import pretty_output

UNREADABLE = {
    "nested past the recursion limit": "[" * 50_000 + "]" * 50_000,
    "a 5000-digit number": '{"n": ' + "7" * 5000 + "}",
}


@pytest.mark.parametrize("name", sorted(UNREADABLE))
def test_a_bash_runs_stdout_is_shown_as_text(name: str) -> None:
    stdout = UNREADABLE[name]
    view = result_view({"stdout": stdout, "exit_code": 0}, language="bash")
    assert (view.format, view.body) == ("text", stdout)
    assert view.meta.startswith("stdout · exit 0")


def test_a_bash_runs_readable_json_is_still_pretty() -> None:
    view = result_view({"stdout": '{"a": [1]}', "exit_code": 0}, language="bash")
    assert view.format == "json"
    assert view.body == '{\n  "a": [\n    1\n  ]\n}'


@pytest.mark.parametrize("name", sorted(UNREADABLE))
def test_a_trials_stdout_is_shown_as_text(name: str) -> None:
    assert pretty_output(UNREADABLE[name]) == (False, UNREADABLE[name])


@pytest.mark.parametrize("name", sorted(UNREADABLE))
def test_a_tool_json_python_cannot_read_is_a_lint_problem(name: str) -> None:
    data, problem = load_tool_json(UNREADABLE[name])
    assert data is None
    assert problem and "JSON" in problem
