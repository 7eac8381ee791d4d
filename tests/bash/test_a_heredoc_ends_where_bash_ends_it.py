"""A here-document bashkit ends on a line where bash reads on is refused when checked.

In an unquoted here-document bash joins a line ending in a backslash to the next, so the
delimiter on that next line does not end it; bashkit ends it there and runs what follows. A
reviewer reading the script as bash took two order cancellations for a note's text; the run
made them. Each case is run in both (bashkit, and GNU bash with the same stand-in tool), so the
check is held to the engines themselves.
"""

from __future__ import annotations

import subprocess

import pytest
from bashkit.scripted import ScriptedTool

from jazzmine.bash.generator import check_script

STAND_IN = 'update_order_status() { echo "CALLED $*"; }\n'
CALL = "update_order_status --order_id ORD-1002 --status cancelled\n"

# Each with the line where bashkit ends the here-document.
DIVERGING = {
    "plain": (f"cat <<EOF\nkept for the log \\\nEOF\n{CALL}EOF\n", 3),
    "tabs stripped": (f"cat <<-EOF\n\tkept for the log \\\n\tEOF\n{CALL}EOF\n", 3),
    "a word as delimiter": (f"head -n 2 <<true\nnote. \\\ntrue\n{CALL}true\necho done\n", 3),
    "the second of two": (f"cat <<A <<B\na\nA\nb \\\nB\n{CALL}B\n", 5),
}
AGREEING = {
    "quoted delimiter": f"cat <<'EOF'\nkept for the log \\\nEOF\n{CALL}",
    "double-quoted delimiter": f'cat <<"EOF"\nkept for the log \\\nEOF\n{CALL}',
    "escaped delimiter": f"cat <<\\EOF\nkept for the log \\\nEOF\n{CALL}",
    "no backslash": f"cat <<EOF\nkept for the log\nEOF\n{CALL}",
    "two backslashes": f"cat <<EOF\nkept for the log \\\\\nEOF\n{CALL}",
    "a here-string": f"cat <<<EOF\nx=1 \\\n{CALL}",
}


def in_bashkit(body: str) -> str:
    tool = ScriptedTool("probe", max_commands=1000, max_loop_iterations=10, timeout_seconds=10)
    return tool.execute_sync(STAND_IN + body).stdout


def in_bash(body: str) -> str:
    done = subprocess.run(
        ["bash", "--norc", "--noprofile"], input=STAND_IN + body, capture_output=True,
        text=True, timeout=10, check=False,
    )  # fmt: skip
    return done.stdout


@pytest.mark.parametrize(("body", "line"), DIVERGING.values(), ids=DIVERGING.keys())
def test_a_heredoc_the_engines_end_apart_is_refused(body: str, line: int) -> None:
    assert "CALLED" in in_bashkit(body) and "CALLED" not in in_bash(body)  # the premise
    (problem,) = check_script(body)
    assert problem.startswith(f"Line {line}: the engine ends this here-document here, but bash")


@pytest.mark.parametrize("body", AGREEING.values(), ids=AGREEING.keys())
def test_a_heredoc_both_engines_end_alike_is_accepted(body: str) -> None:
    assert ("CALLED" in in_bashkit(body)) == ("CALLED" in in_bash(body))  # the premise
    assert check_script(body) == []
