"""`NaN`, `Infinity` and a number past float's range (`1e999` reads as inf) parse as tool.json,
but no JSON column can store them: a script tool holding one in its schema or in an unknown
key made the catalog's save fail with a database error (a 500), after every other check had
passed. The tool is refused where it is read, naming the file and the field."""

from __future__ import annotations

import io
import zipfile

import pytest

from jazzmine.scripttools import ScriptTool, ScriptToolError, load_zip

HEAD = '{"name": "fetch_x", "description": "Fetch x for tests. Use when x.", '
CASES = {
    "Infinity in an unknown key": HEAD + '"parameters": {"type": "object"}, "weird": Infinity}',
    "-Infinity deep in one": HEAD + '"parameters": {"type": "object"}, "w": [{"a": -Infinity}]}',
    "NaN in an unknown key": HEAD + '"parameters": {"type": "object"}, "weird": NaN}',
    "1e999 in the schema": HEAD + '"parameters": {"type": "object", "maximum": 1e999}}',
    "NaN deep in the schema": HEAD
    + '"parameters": {"type": "object", "properties": {"a": {"type": "number", "enum": [NaN]}}}}',
}


def zipped(tool_json: str) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("fetch_x/tool.json", tool_json)
        archive.writestr("fetch_x/script.py", "print('{}')\n")
    return buffer.getvalue()


@pytest.mark.parametrize("case", CASES)
def test_a_zip_whose_tool_json_holds_one_is_refused(case: str) -> None:
    with pytest.raises(ScriptToolError, match="finite") as caught:
        load_zip(zipped(CASES[case]))
    assert caught.value.file == "fetch_x/tool.json"


def test_a_tool_made_in_code_with_one_is_refused() -> None:
    with pytest.raises(ScriptToolError, match="finite"):
        ScriptTool(
            name="fetch_x",
            description="Fetch x.",
            source="print(1)\n",
            parameters={"type": "object", "maximum": float("inf")},
        )


def test_finite_numbers_stay() -> None:
    (tool,) = load_zip(zipped(HEAD + '"parameters": {"type": "object", "maximum": 1e308}}'))
    assert tool.parameters["maximum"] == 1e308


def test_a_secret_named_twice_is_refused() -> None:
    tool_json = HEAD + '"parameters": {"type": "object"}, "secrets": ["X_KEY", "Y", "X_KEY"]}'
    with pytest.raises(ScriptToolError, match="names 'X_KEY' twice"):
        load_zip(zipped(tool_json))
