"""The checklist's registry: each check carries its id, title and function, each id once."""

from __future__ import annotations

import pytest

from jazzmine.scripttools.lint import CHECKS, TITLES, Check, Registry, lint_files
from jazzmine.scripttools.lint.checklist import run_check
from jazzmine.scripttools.lint.subject import read_subject

from .samples import rsi_script


def _fails(subject):
    return False, "judged"


def test_every_check_has_a_title_and_the_report_follows_the_registry():
    assert all(check.title.strip() for check in CHECKS)
    items = lint_files("{", rsi_script())
    assert [(i.id, i.title) for i in items] == [(c.id, c.title) for c in CHECKS]
    assert TITLES == {c.id: c.title for c in CHECKS}


def test_a_registry_refuses_an_id_twice_even_across_a_join():
    first = Registry()
    first.register("same", "one")(_fails)
    with pytest.raises(ValueError, match="'same'"):
        first.register("same", "two")(_fails)
    second = Registry([Check("same", "three", _fails)])
    with pytest.raises(ValueError, match="'same'"):
        Registry.join(first, second)


def test_a_check_found_by_its_id_judges_as_in_the_report():
    script = rsi_script().replace("sys.exit(1)", "return")
    subject = read_subject("{}", script, script_filename="script.py", folder=None)
    item = run_check(CHECKS["stderr_contract"], subject)
    assert item == next(i for i in lint_files("{}", script) if i.id == "stderr_contract")
    assert not item.passed and "non-zero exit" in item.message


@pytest.mark.parametrize(
    ("needs", "tool_json", "script", "message"),
    [
        ({"needs_manifest": True}, "[", "print(1)", "not checked: tool.json could not be read"),
        ({"needs_script": True}, "{}", "def f(:", "not checked: script.py does not parse"),
        ({"needs_manifest": False}, "[", "def f(:", "judged"),
    ],
)
def test_a_check_whose_input_could_not_be_read_is_not_judged(needs, tool_json, script, message):
    subject = read_subject(tool_json, script, script_filename="script.py", folder=None)
    item = run_check(Check("probe", "a probe", _fails, **needs), subject)
    assert not item.passed and item.message.startswith(message)
