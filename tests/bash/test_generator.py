from __future__ import annotations

from jazzmine.bash import ToolSpec
from jazzmine.bash.generator import BashScriptGenerator, check_script

SPECS = [
    ToolSpec(
        name="get_user",
        description="Fetch a user by id.",
        schema={"type": "object", "properties": {"id": {"type": "integer"}}, "required": ["id"]},
    )
]


def test_the_first_prompt_is_bashkits_prompt_with_the_task() -> None:
    generator = BashScriptGenerator(SPECS)
    prompt = generator.build_prompt("Greet user 1", "shop")
    assert prompt.startswith(generator.system_prompt())
    assert "get_user" in prompt and "Task: Greet user 1" in prompt
    assert "Previous script" not in prompt


def test_a_retry_quotes_the_previous_script_and_error() -> None:
    prompt = BashScriptGenerator(SPECS).build_prompt(
        "Greet user 1", "shop", "get_user --id x", "get_user: invalid integer", attempt=2
    )
    assert "attempt 1" in prompt and "get_user --id x" in prompt
    assert "invalid integer" in prompt


def test_fences_are_stripped_and_the_check_is_light() -> None:
    generator = BashScriptGenerator(SPECS, max_chars=50)
    script = generator.assemble_script("```bash\nget_user --id 1 | jq .name\n```", "shop")
    assert script == "get_user --id 1 | jq .name\n"
    assert generator.validate(script, "shop") == []
    assert generator.validate("   ", "shop") == ["Line 1: the bash script is empty"]
    assert "limit 50" in generator.validate("echo " + "x" * 60, "shop")[0]
    assert check_script("echo a\necho \x00") == ["Line 2: the bash script holds a NUL character"]


def test_a_command_nothing_answers_to_is_told_before_the_script_runs() -> None:
    generator = BashScriptGenerator(SPECS)
    body = (
        "get_user --id 1 | jq .name\n"
        "show() { printf '%s\\n' \"$1\"; }\n"  # a function the script defines is a command
        "show hi\n"
        "get_usr --id 2\n"  # a typo of the tool
        "curl -s https://example.com | jq .\n"  # a host program bashkit does not have
    )
    problems = generator.validate(body, "shop")
    assert [p.split(":")[0] for p in problems] == ["Line 4", "Line 5"]
    assert "'get_usr' is not a command here" in problems[0] and "(get_user)" in problems[0]
    assert "'curl' is not a command here" in problems[1]
    # Every command bashkit has, and the tools and help builtins its prompt names, pass.
    known = "echo a | grep a | sed s/a/b/ | awk '{print}' | sort | uniq | wc -l | tr a b\n"
    assert generator.validate(known + "help\ndiscover --categories\n[ 1 = 1 ] && true\n", "s") == []
