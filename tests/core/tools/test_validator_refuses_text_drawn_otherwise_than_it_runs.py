"""The validator refuses text a page draws otherwise than Python reads it, and nothing else.

The editor's live check, the API, a reviewer's edit and a run all ask `validate_script`, so
what the editor marks is what a run refuses. Escapes in strings, plain emoji and tabs stay
fine, and so do the sandbox's own tool names. A name Python reads otherwise than it is spelt
(NFKC: `ᵒrder_id` runs as `order_id`) is refused: a page draws it as a name of its own.
"""

from __future__ import annotations

import pytest

from jazzmine.bash.generator import check_script
from jazzmine.core.tools import validate_script

TOOLS = ["get_orders", "größe_berechnen"]


@pytest.mark.parametrize(
    ("script", "line", "marked"),
    [
        ("x = 1\nif x == 2:\n    x = 3\n    \x0cemit_result(get_orders())\n", 4, "U+000C"),
        ('s = "none\u202e # x"\nemit_result(s)\n', 1, "U+202E"),
        ('s = "a\u2067b"\nemit_result(s)\n', 1, "U+2067"),
        ('emit_result("deli\u200bvered")\n', 1, "U+200B"),
        ("# note\u2028emit_result(1)\nemit_result(2)\n", 1, "U+2028"),
        ("emit_result(1)  # \u2029\n", 1, "U+2029"),
        ('emit_result("\ufeff")\n', 1, "U+FEFF"),
        ('emit_result("\x1b[2K")\n', 1, "U+001B"),
        ('emit_result("\ue000")\n', 1, "U+E000"),
        ("st\u0430tus = 1\nemit_result(st\u0430tus)\n", 1, "U+0430"),
        ("def f(\u0430):\n    return \u0430\nemit_result(f(1))\n", 1, "U+0430"),
        ("emit_result(get_orders(st\u0430tus=1))\n", 1, "U+0430"),
        ("r = get_orders()\nemit_result(r.d\u0430ta)\n", 2, "U+0430"),
        ("größe = 1\nemit_result(größe)\n", 1, "U+00F6"),
        # Read as `order_id` and `status` (NFKC), drawn as names of their own.
        ('order_id = "A"\n\u1d52rder_id = "B"\nemit_result(order_id)\n', 2, "U+1D52"),
        ("status = 1\n\u02e2tatus = 2\nemit_result(get_orders(status=status))\n", 2, "U+02E2"),
        ('emit_result(get_orders(\u02e2tatus="x"))\n', 1, "U+02E2"),
        ("r = get_orders()\nemit_result(r.\ufb01eld)\n", 2, "U+FB01"),
        ("def \uff46(x):\n    return x\nemit_result(1)\n", 1, "U+FF46"),
        ("emit_result(\uff47et_orders())\n", 1, "U+FF47"),
        ("s = 1\nemit_result(f'{\u02e2}')\n", 2, "U+02E2"),
        ('s = 1\nemit_result(rf"""\n{\u02e2}""")\n', 3, "U+02E2"),
        ("emit_result(\U0001d628et_orders())\n", 1, "U+1D628"),
    ],
)
def test_it_refuses_a_character_or_a_name_drawn_otherwise_than_it_runs(script, line, marked):
    violations = validate_script(script, TOOLS)
    assert any(v.startswith(f"Line {line}: ") and marked in v for v in violations), violations


@pytest.mark.parametrize(
    "script",
    [
        'emit_result("deli\\u200bvered \\u202e \\x0c")\n',
        'emit_result("party \U0001f389 café naïve 日本")\n',
        "# a comment in 日本語, with émoji \U0001f600\nemit_result(1)\n",
        "for i in range(2):\n\temit_log(str(i))\nemit_result(1)\n",
        "x = 1\r\nemit_result(x)\r\n",
        'emit_result("\u2167 \ufb01 \uff47")  # \ufb01 \u1d52\n',  # strings, comments
        "emit_result(f'{1} and {2}' + '\u2167')\n",
        "emit_result(größe_berechnen())\n",  # the team's own tool, by its name
    ],
)
def test_it_keeps_text_drawn_as_it_runs(script):
    assert validate_script(script, TOOLS) == []


def test_a_bash_script_is_refused_on_the_line_of_its_unseen_character():
    assert check_script("get_orders\n\x0cget_orders\n") == [
        "Line 2: the character U+000C (a control character) is not allowed: a reviewer's page "
        "does not show it as it runs. Remove it, or write it as an escape inside a string."
    ]
    assert check_script('echo "party \U0001f389"; get_orders\n') == []
