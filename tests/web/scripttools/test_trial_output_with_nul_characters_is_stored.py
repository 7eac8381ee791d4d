"""A trial whose script writes NUL characters ends with its output stored, NUL as U+FFFD.

PostgreSQL holds no NUL in text nor `\\u0000` in jsonb: storing such a trial's result raised,
and the trial stayed `running` until the reaper ended it as lost. Its output is kept instead
(`studio.storable`), the same on SQLite.
"""

from __future__ import annotations

import pytest

from .conftest import make_tool, run_trial

pytestmark = [pytest.mark.docker, pytest.mark.django_db(transaction=True)]

R = "\ufffd"  # what a NUL is stored and shown as


def _trial(sandbox, member, source: str):
    from jazzmine_web.catalog.services import script_tool_save

    row, _ = script_tool_save(sandbox=sandbox, tool=make_tool("nul", source), author=member)
    return run_trial(row, {"x": 1}, user=member)


def test_json_with_escaped_nuls_is_kept_as_data(sandbox, member, base_image) -> None:
    source = (
        "import sys\n"
        r'sys.stdout.write("{\"k\\u0000\": [\"v\\u0000\"]}")' + "\n"
        r'sys.stderr.write("warn\x00ing")' + "\n"
    )
    trial = _trial(sandbox, member, source)
    assert (trial.state, trial.status, trial.passed) == ("done", "valid_json", True)
    assert trial.data == {f"k{R}": [f"v{R}"]}
    assert trial.stderr == f"warn{R}ing"


def test_raw_nuls_on_stdout_and_stderr_are_kept_as_text(sandbox, member, base_image) -> None:
    source = r'import sys; sys.stdout.write("out\x00put"); sys.stderr.write("bad\x00"); sys.exit(2)'
    trial = _trial(sandbox, member, source + "\n")
    assert (trial.state, trial.status, trial.exit_code) == ("done", "script_error", 2)
    assert trial.stdout == f"out{R}put" and trial.stderr == f"bad{R}"
    assert trial.message == f"script error: bad{R}"
