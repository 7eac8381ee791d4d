"""The anti-hallucination checklist: good tools pass, each broken tool.json fails one item."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from jazzmine.scripttools import lint_files, lint_passed, lint_tool, load_tool_dir
from jazzmine.scripttools.lint import TITLES

from .samples import PRICES, RSI, rsi_json, rsi_script


def failing(items) -> set[str]:
    return {item.id for item in items if not item.passed}


def lint(data: dict[str, Any], script: str) -> list:
    return lint_files(json.dumps(data, indent=2), script, script_filename="script.py")


def test_the_good_python_tool_passes_every_item():
    items = lint_tool(load_tool_dir(RSI))
    assert [i.id for i in items] == list(TITLES)
    assert lint_passed(items), [i for i in items if not i.passed]


def test_the_good_node_tool_passes_every_item():
    items = lint_tool(load_tool_dir(PRICES))
    assert lint_passed(items), [i for i in items if not i.passed]


def test_invalid_json_fails_with_its_line_and_leaves_script_items_checked():
    text = (
        (RSI / "tool.json").read_text().replace('"always_allow": true,', '"always_allow": true,,')
    )
    items = {i.id: i for i in lint_files(text, rsi_script())}
    assert not items["valid_json"].passed
    assert "line 4" in items["valid_json"].message
    for script_item in (
        "stdin_contract",
        "stdout_contract",
        "stderr_contract",
        "no_hardcoded_keys",
    ):
        assert items[script_item].passed
    assert items["name_format"].message.startswith("not checked")


def _json(mutate: Callable[[dict[str, Any]], None]) -> Callable[[], tuple[dict, str]]:
    def make() -> tuple[dict, str]:
        data = rsi_json()
        mutate(data)
        return data, rsi_script()

    return make


def _script(old: str, new: str) -> Callable[[], tuple[dict, str]]:
    def make() -> tuple[dict, str]:
        script = rsi_script()
        assert old in script
        return rsi_json(), script.replace(old, new, 1)

    return make


def _props(data: dict[str, Any]) -> dict[str, Any]:
    return data["parameters"]["properties"]


def _set(target: Callable[[dict], dict], key: str, value: Any) -> Callable[[dict], None]:
    def mutate(data: dict[str, Any]) -> None:
        target(data)[key] = value

    return mutate


BROKEN: dict[str, Callable[[], tuple[dict, str]]] = {
    "name_format": _json(_set(lambda d: d, "name", "rsi_calc")),
    "schema_object": _json(_set(lambda d: d["parameters"], "type", "dict")),
    "required_declared": _json(_set(lambda d: d["parameters"], "required", ["symbol", "ticker"])),
    "property_fields": _json(lambda d: _props(d)["symbol"].pop("description")),
    "defaults_typed": _json(
        _set(
            _props,
            "verbose",
            {"type": "boolean", "description": "Add the raw gains and losses.", "default": "yes"},
        )
    ),
    "optional_defaults": _json(
        _set(_props, "note", {"type": "string", "description": "Free text kept with the result."})
    ),
    "defaults_match_script": _json(lambda d: _props(d)["period"].update(default=20)),
    "description_length": _json(
        _set(lambda d: d, "description", "Use when the user asks for RSI.")
    ),
    "description_usefulness": _json(
        _set(
            lambda d: d,
            "description",
            "Compute the Relative Strength Index momentum oscillator value for one ticker.",
        )
    ),
    "parameter_descriptions": _json(lambda d: _props(d)["signal"].update(description="Style.")),
    "stdin_contract": _script(
        'json.loads(sys.stdin.read() or "{}")', 'json.loads(sys.argv[1] if sys.argv[1:] else "{}")'
    ),
    "stdout_contract": _script(
        "    period = int(", '    print("debug:", symbol)\n    period = int('
    ),
    "stderr_contract": lambda: (rsi_json(), rsi_script().replace("sys.exit(1)", "return")),
    "required_guarded": _script(
        '    if not symbol:\n        print("missing required parameter: symbol", file=sys.stderr)\n'
        "        sys.exit(1)\n",
        "",
    ),
    "no_secret_parameters": _json(
        _set(
            _props,
            "api_key",
            {"type": "string", "description": "Key of the quote provider.", "default": ""},
        )
    ),
    "no_hardcoded_keys": _script(
        "def compute_rsi(",
        'HEADERS = {"Authorization": "Bearer sk-abcdefghijklmnopqrstuvwx1234"}\n\n\ndef compute_rsi(',
    ),
    "imports_available": _script("import sys\n", "import sys\n\nimport yfinance\n"),
}


def test_every_item_has_a_broken_tool():
    assert set(BROKEN) | {"valid_json"} == set(TITLES)


@pytest.mark.parametrize("item", sorted(BROKEN))
def test_a_broken_tool_fails_exactly_its_item(item):
    data, script = BROKEN[item]()
    items = lint(data, script)
    assert failing(items) == {item}, [i for i in items if not i.passed]
    assert next(i for i in items if i.id == item).message


def test_it_names_the_mismatched_default_in_its_message():
    data = rsi_json()
    _props(data)["period"]["default"] = 20
    item = next(i for i in lint(data, rsi_script()) if i.id == "defaults_match_script")
    assert "period" in item.message and "20" in item.message and "14" in item.message


def test_it_flags_a_script_default_that_tool_json_does_not_declare():
    data = rsi_json()
    _props(data)["period"].pop("default")
    item = next(i for i in lint(data, rsi_script()) if i.id == "defaults_match_script")
    assert not item.passed and "declares no default" in item.message


def test_a_fallback_for_a_required_value_is_no_default_to_declare():
    # `args.get("period", 14)` for a value that always comes is defensive code: it was flagged
    # as a default tool.json does not declare, beside the tool's required list.
    data = rsi_json()
    _props(data)["period"].pop("default")
    data["parameters"].setdefault("required", []).append("period")
    item = next(i for i in lint(data, rsi_script()) if i.id == "defaults_match_script")
    assert item.passed, item.message


def test_it_reads_defaults_through_module_constants_and_or_fallbacks():
    script = (
        rsi_script()
        .replace('int(args.get("period", 14))', 'int(args.get("period") or DEFAULT_PERIOD)')
        .replace("def main():", "DEFAULT_PERIOD = 14\n\n\ndef main():")
    )
    assert lint_passed(lint(rsi_json(), script))


def test_it_reports_a_script_that_does_not_parse():
    items = {i.id: i for i in lint(rsi_json(), "def main(:\n")}
    assert not items["stdin_contract"].passed
    assert "does not parse" in items["stdin_contract"].message


def test_it_checks_a_javascript_default_against_tool_json():
    data = json.loads((PRICES / "tool.json").read_text())
    data["parameters"]["properties"]["digits"]["default"] = 3
    script = (PRICES / "script.js").read_text()
    items = lint_files(json.dumps(data), script, script_filename="script.js")
    assert failing(items) == {"defaults_match_script"}


def test_it_flags_console_log_debugging_in_javascript():
    script = (
        (PRICES / "script.js")
        .read_text()
        .replace("  const mean", "  console.log('prices', prices);\n  const mean")
    )
    items = lint_files((PRICES / "tool.json").read_text(), script, script_filename="script.js")
    assert failing(items) == {"stdout_contract"}


def test_it_flags_a_javascript_script_that_ignores_stdin():
    script = (PRICES / "script.js").read_text().replace("fs.readFileSync(0, 'utf-8')", "'{}'")
    items = lint_files((PRICES / "tool.json").read_text(), script, script_filename="script.js")
    assert failing(items) == {"stdin_contract"}


@pytest.mark.parametrize(
    "description",
    [
        "This tool computes the RSI for a ticker. Use when the user asks about momentum signals.",
        "Compute RSI via urllib and stdout JSON. Use when the user asks about momentum signals.",
        "Compute RSI; the period parameter is an integer. Use when the user asks about momentum.",
        "計算 RSI 動能指標,當使用者詢問某檔股票是否超買或超賣時使用這個工具來回答問題。",
    ],
    ids=["filler", "implementation", "contract", "not-english"],
)
def test_it_rejects_descriptions_that_dilute_the_signal(description):
    data = rsi_json()
    data["description"] = description
    item = next(i for i in lint(data, rsi_script()) if i.id == "description_usefulness")
    assert not item.passed


@pytest.mark.parametrize("name", ["sort_key", "keyword", "monkey", "page_token_count_hint"])
def test_it_does_not_mistake_ordinary_names_for_secrets(name):
    data = rsi_json()
    _props(data)[name] = {"type": "string", "description": "Ordinary value.", "default": ""}
    item = next(i for i in lint(data, rsi_script()) if i.id == "no_secret_parameters")
    assert item.passed is (name != "page_token_count_hint")
