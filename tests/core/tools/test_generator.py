from __future__ import annotations

import pytest

from jazzmine.core.tools import (
    SandboxConfig,
    ScriptGenerator,
    ToolRegistry,
    body_offset,
    strip_fences,
)
from jazzmine.core.tools.generator import assembled_body, python_body

from . import sample_tools


@pytest.fixture
def generator() -> ScriptGenerator:
    reg = ToolRegistry()
    reg.register_sandbox(SandboxConfig(name="shop"))
    reg.tool(description="Fetch a user.", parameters=[sample_tools.USER_PARAM], sandbox="shop")(
        sample_tools.get_user
    )
    return ScriptGenerator(reg)


def test_the_first_attempt_states_ten_numbered_rules(generator: ScriptGenerator) -> None:
    prompt = generator.build_prompt("Greet user 7", "shop")
    for n in range(1, 11):
        assert f"\n{n}. " in prompt
    assert "\n11. " not in prompt
    assert "no markdown, no code fences" in prompt
    assert prompt.rstrip().endswith("Greet user 7")
    assert '<tool name="get_user">' in prompt


def test_a_retry_shows_the_previous_script_error_and_key_error_hint(
    generator: ScriptGenerator,
) -> None:
    prompt = generator.build_prompt(
        "Greet user 7",
        "shop",
        previous_script="r = get_user(user_id='7')\nemit_result(r.data[0])",
        previous_error="Traceback (most recent call last):\n  ...\nKeyError: 0",
        attempt=2,
    )
    assert "attempt 1" in prompt
    assert "emit_result(r.data[0])" in prompt
    assert "KeyError: 0` means you indexed `r.data` with an integer" in prompt


def test_a_missing_string_key_gets_a_different_hint(generator: ScriptGenerator) -> None:
    prompt = generator.build_prompt("t", "shop", "x", "KeyError: 'orders'", attempt=3)
    assert "has no key 'orders'" in prompt
    assert "with an integer" not in prompt


def test_a_retry_without_key_error_has_no_key_hint(generator: ScriptGenerator) -> None:
    prompt = generator.build_prompt(
        "t", "shop", "x", "ZeroDivisionError: division by zero", attempt=2
    )
    assert "Hint:" not in prompt


def test_an_unknown_sandbox_is_a_clear_error(generator: ScriptGenerator) -> None:
    with pytest.raises(ValueError, match="Unknown sandbox 'nope'"):
        generator.build_prompt("t", "nope")


@pytest.mark.parametrize(
    "answer",
    [
        "```python\nemit_result({'a': 1})\n```",
        "Here you go:\n```py\nemit_result({'a': 1})\n```\nHope it helps",
        "```\nemit_result({'a': 1})",
        "emit_result({'a': 1})",
    ],
)
def test_fences_are_stripped(answer: str) -> None:
    assert strip_fences(answer) == "emit_result({'a': 1})"


FENCE = "`" * 3
# A program of its own that carries a fence in a string literal (or a comment): a reader of the
# program reads the "shipped" call; the fence's text never runs as part of it.
PROGRAM_WITH_A_FENCE_INSIDE = [
    f'r = ship("ORD-1")\nNOTES = """\n{FENCE}python\ncancel("ORD-1")\n{FENCE}\n"""\nemit_result(r)',
    f"r = ship('ORD-1')\nNOTES = '{FENCE}python\\ncancel(\"ORD-1\")\\n{FENCE}'\nemit_result(r)",
    f'# {FENCE}python\n# cancel("ORD-1")\n# {FENCE}\nr = ship("ORD-1")\nemit_result(r)',
    f'r = ship("ORD-1")\nemit_result(r)\nf"""\n{FENCE}\ncancel("ORD-1")\n{FENCE}"""',
]


@pytest.mark.parametrize("program", PROGRAM_WITH_A_FENCE_INSIDE)
def test_an_answer_that_is_a_program_runs_as_written_whatever_fence_it_holds(
    generator: ScriptGenerator, program: str
) -> None:
    assert python_body(program) == program
    script = generator.assemble_script(program, "shop")
    assert assembled_body(script) == program + "\n"
    assert "ship(" in assembled_body(script)


@pytest.mark.parametrize(
    "answer",
    [
        "```python\nemit_result({'a': 1})\n```",
        "Here you go:\n```py\nemit_result({'a': 1})\n```\nHope it helps",
        "Sure.\n\n```python\nemit_result({'a': 1})\n```\n\n```python\nprint('usage')\n```",
        "emit_result({'a': 1})",
        "emit_result({'a': 1})\n\n",
        "```python\r\nemit_result({'a': 1})\r\n```",
        "Here:\r\n```py\r\nemit_result({'a': 1})\r\n```\r\n",
    ],
)
def test_an_answer_that_is_not_a_program_gives_its_first_fence(answer: str) -> None:
    assert python_body(answer) == "emit_result({'a': 1})"


def test_a_program_keeps_its_leading_blank_lines_so_that_its_lines_keep_their_numbers(
    generator: ScriptGenerator,
) -> None:
    answer = "\n\nd = {}\nemit_result(d['nope'])\n"
    assert python_body(answer) == "\n\nd = {}\nemit_result(d['nope'])"
    script = generator.assemble_script(answer, "shop")
    checked = generator.assemble_script("\n\nimport os\nemit_result(1)\n", "shop")
    (violation,) = generator.validate(checked, "shop")
    offset = len(generator.preamble("shop").splitlines())
    assert violation.startswith(f"Line {offset + 3}:"), violation  # line 3 of what was sent
    assert script.splitlines()[offset + 3] == "emit_result(d['nope'])"  # line 4 of it


def test_an_answer_with_a_nul_or_absurd_nesting_is_not_a_program_and_breaks_nothing() -> None:
    assert python_body("x = 1\x00") == "x = 1\x00"  # no fence: the validator refuses it
    deep = "(" * 100_000 + ")" * 100_000
    assert python_body(f"{deep}\n{FENCE}\nemit_result(1)\n{FENCE}") == "emit_result(1)"


def test_assembly_names_tools_and_helpers_and_keeps_body_lines_countable(
    generator: ScriptGenerator,
) -> None:
    script = generator.assemble_script("```python\nx = 1\nemit_result({'x': x})\n```", "shop")
    assert "# tools: get_user" in script
    assert "emit_intermediate, emit_log, emit_result" in script
    assert script.endswith("emit_result({'x': x})\n")
    offset = body_offset(script)
    assert script.splitlines()[offset] == "x = 1"
    assert generator.validate(script, "shop") == []


def test_validation_messages_are_listed_for_the_llm(generator: ScriptGenerator) -> None:
    script = generator.assemble_script(
        "data = open('/etc/passwd').read()\nemit_result(data)", "shop"
    )
    violations = generator.validate(script, "shop")
    offset = body_offset(script)
    assert any(v.startswith(f"Line {offset + 1}: call to 'open' is forbidden") for v in violations)
    message = generator.validation_error_message(violations)
    assert "rejected with" in message and "call to 'open' is forbidden" in message
