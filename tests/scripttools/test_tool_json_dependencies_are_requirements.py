"""tool.json dependencies are plain requirements: the file and the bad line are named."""

from __future__ import annotations

import pytest

from jazzmine.scripttools import ScriptTool, ScriptToolError

BASE = {"name": "echo", "description": "Echo for tests.", "parameters": {"type": "object"}}


@pytest.mark.parametrize(
    "bad",
    [" -r /etc/passwd", "--log=/tmp/x", "numpy;--log x", "pkg @ file:///etc", "../evil",
     "numpy\n-r x", "\u2010r x", "x==1 -i http://y"],
)  # fmt: skip
def test_a_tool_json_with_a_pip_option_url_or_path_is_refused(bad) -> None:
    with pytest.raises(ScriptToolError) as refused:
        ScriptTool.from_json_dict({**BASE, "dependencies": ["httpx", bad]}, source="print(1)\n")
    assert str(refused.value).startswith("tool.json: dependencies line 2:")


def test_plain_requirements_with_versions_extras_and_markers_load() -> None:
    deps = ["httpx[http2]>=0.27,<1", 'numpy; python_version >= "3.10"']
    tool = ScriptTool.from_json_dict({**BASE, "dependencies": deps}, source="print(1)\n")
    assert tool.dependencies == deps
