"""An answer in the other language (Python in bash mode, bash in Python mode) is told apart."""

from __future__ import annotations

import subprocess
import sys

import pytest

from jazzmine.language import written_in_other_language, wrong_language_message

PYTHON = "orders = get_orders(user_id='u1')\nemit_result({'n': len(orders.data)})\n"
BASH = "get_orders --user-id u1 | jq '.orders | length'\n"


@pytest.mark.parametrize(
    ("text", "expected", "other"),
    [
        (PYTHON, "bash", "python"),
        (BASH, "python", "bash"),
        ("#!/usr/bin/env bash\nfor id in 1 2; do echo $id; done\n", "python", "bash"),
        ("```python\nprint(get_user('u1').data)\n```\n", "bash", "python"),
        ("```bash\nget_user --user-id u1\n```\n", "python", "bash"),
    ],
)
def test_a_script_in_the_other_language_is_named(text: str, expected: str, other: str) -> None:
    assert written_in_other_language(text, expected) == other  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (PYTHON, "python"),
        (BASH, "bash"),
        ("x=1\n", "python"),  # both parse: it can run as asked, so it is never flagged
        ("ls\n", "bash"),
        ("def broken(:\n", "bash"),  # neither parses: a plain syntax error, not a language
        ("   \n", "python"),
    ],
)
def test_a_script_that_can_run_as_asked_or_is_just_broken_is_not_flagged(
    text: str, expected: str
) -> None:
    assert written_in_other_language(text, expected) is None  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "text",
    [
        "total = ",
        "total += ",
        "from jazzmine import",
        "import",
        "def summary",
        "class Order",
        "orders = get_orders(user_id='u1')\nlatest =",
        "rows[0] = ",
        "try",
        "with open",
        "  pass x",
    ],
)
def test_python_being_typed_is_not_taken_for_bash(text: str) -> None:
    # bashkit's parser accepts each of these (a command and its words); only Python writes them
    assert written_in_other_language(text, "python") is None


@pytest.mark.parametrize(
    "text",
    [
        BASH,
        "x=1 echo $x | wc -c\n",
        'if [ "$a" = "$b" ]; then get_user --user-id u1; fi\n',
        "test $a = b && echo same\n",
        "for id in 1 2; do\n  get_user --user-id $id\ndone\n",
        'total=$(get_orders --user-id u1 | jq length)\necho "$total"\n',
    ],
)
def test_bash_with_an_equals_sign_or_a_test_is_still_told(text: str) -> None:
    assert written_in_other_language(text, "python") == "bash"


def test_the_message_says_what_it_looks_like_and_what_to_do() -> None:
    message = wrong_language_message(PYTHON, "bash")
    assert message is not None
    assert "looks like a Python script" in message and "bash mode" in message
    assert "Switch the language to Python" in message


def test_the_module_never_imports_django() -> None:
    code = "import sys, jazzmine.language; print(any(m.startswith('django') for m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
