"""A zip or tool.json that Python's zipfile, json or float() cannot read is a ScriptToolError
naming the file, never another exception (which the import page turned into a 500)."""

from __future__ import annotations

import pytest

from jazzmine.scripttools import ScriptTool, ScriptToolError, load_tool_dir, load_zip
from jazzmine.scripttools.model import parse_tool_json

from .unreadable_zips import (
    BIG,
    SCRIPT,
    UNREADABLE_MEMBERS,
    UNREADABLE_TOOL_JSON,
    good_zip,
    tool_json_text,
)


@pytest.mark.parametrize("case", UNREADABLE_MEMBERS)
def test_a_member_zipfile_cannot_unpack_is_refused_by_name(case: str) -> None:
    data, member, words = UNREADABLE_MEMBERS[case]
    with pytest.raises(ScriptToolError) as caught:
        load_zip(data)
    assert caught.value.file == member
    assert caught.value.problem.startswith("cannot be read: ")
    assert words in str(caught.value)


@pytest.mark.parametrize("case", UNREADABLE_TOOL_JSON)
def test_tool_json_that_python_cannot_read_is_refused_by_name(case: str) -> None:
    data, words = UNREADABLE_TOOL_JSON[case]
    with pytest.raises(ScriptToolError, match=words) as caught:
        load_zip(data)
    assert caught.value.file == "x/tool.json"
    assert "0000" not in str(caught.value)


@pytest.mark.parametrize(
    "extra, words",
    [
        (', "timeout": 1' + "0" * 400, "timeout"),
        (', "zz": ' + BIG, "digits"),
        (', "zz": ' + "[" * 3000 + "]" * 3000, "nested too deeply"),
    ],
    ids=["huge timeout", "5000-digit number", "nesting 3000 deep"],
)
def test_a_tool_folder_is_refused_the_same_way(tmp_path, extra: str, words: str) -> None:
    folder = tmp_path / "x"
    folder.mkdir()
    (folder / "tool.json").write_text(tool_json_text(extra))
    (folder / "script.py").write_text(SCRIPT)
    with pytest.raises(ScriptToolError, match=words):
        load_tool_dir(folder)


@pytest.mark.parametrize("timeout", [10**400, -(10**400), 10**309])
def test_from_json_dict_refuses_a_timeout_no_float_holds(timeout: int) -> None:
    data = {"name": "x", "description": "d", "parameters": {}, "timeout": timeout}
    with pytest.raises(ScriptToolError, match="'timeout' is too far out of range"):
        ScriptTool.from_json_dict(data, source=SCRIPT)


@pytest.mark.parametrize("text", [BIG, "[" * 5000 + "]" * 5000, '{"a": ' * 5000 + "1" + "}" * 5000])
def test_parse_tool_json_names_the_file(text: str) -> None:
    with pytest.raises(ScriptToolError) as caught:
        parse_tool_json(text, file="tools/x/tool.json")
    assert caught.value.file == "tools/x/tool.json"


def test_the_same_zip_unharmed_still_loads() -> None:
    assert [tool.name for tool in load_zip(good_zip())] == ["x"]
