"""The script's file name sets a script tool's runtime (script.py: python3, script.js: node);
a tool.json that names a runtime too must name that one, or it is refused naming both.

`"runtime": "ruby"` (no such runtime) or `"runtime": "node"` beside a script.py was kept as an
unknown key and ignored: the tool was imported to run as python3 with no word said, and its
export wrote the contradiction back out.
"""

from __future__ import annotations

import io
import json
import zipfile

import pytest

from jazzmine.scripttools import ScriptToolError, load_zip

from .samples import rsi_json, rsi_script


def tool_zip(runtime: object, script_name: str = "script.py") -> bytes:
    data = {**rsi_json(), "runtime": runtime}
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("calculate_rsi/tool.json", json.dumps(data))
        archive.writestr(f"calculate_rsi/{script_name}", rsi_script())
    return buffer.getvalue()


@pytest.mark.parametrize(
    ("runtime", "script_name", "words"),
    [("ruby", "script.py", "'ruby' is not a runtime"),
     ("node", "script.py", "'node', but its script is script.py"),
     ("python3", "script.js", "'python3', but its script is script.js"),
     ("python", "script.py", "'python' is not a runtime"),
     (3, "script.py", "must be a string")],
    ids=["no such runtime", "node beside script.py", "python3 beside script.js", "python",
         "a number"],
)  # fmt: skip
def test_a_runtime_other_than_the_scripts_is_refused(
    runtime: object, script_name: str, words: str
) -> None:
    with pytest.raises(ScriptToolError) as refused:
        load_zip(tool_zip(runtime, script_name))
    assert refused.value.file == "calculate_rsi/tool.json"
    assert words in refused.value.problem, refused.value.problem


@pytest.mark.parametrize(("runtime", "script_name"), [("python3", "script.py"),
                                                      ("node", "script.js")])  # fmt: skip
def test_the_scripts_own_runtime_is_taken_and_not_kept_twice(
    runtime: str, script_name: str
) -> None:
    (tool,) = load_zip(tool_zip(runtime, script_name))
    assert tool.runtime == runtime
    assert "runtime" not in tool.extra and "runtime" not in tool.to_json_dict()
