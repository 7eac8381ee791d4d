"""What every check reads: tool.json as loaded, the parts of it checks share, and the script."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ...jsontext import JSONTextError, json_read
from ..model import SCRIPT_FILES
from .javascript_scan import scan_javascript
from .python_scan import scan_python
from .scan import ScriptScan


@dataclass(frozen=True)
class Subject:
    """A tool under lint: tool.json (`data` is None when it could not be read) and its script."""

    data: dict[str, Any] | None
    json_problem: str | None
    scan: ScriptScan
    files: dict[str, str]
    folder: str | None = None
    name: Any = None
    parameters: Any = None
    props: dict[str, dict[str, Any]] = field(default_factory=dict)
    raw_required: Any = None
    required: list[str] = field(default_factory=list)
    description: str = ""
    dependencies: list[str] = field(default_factory=list)


def read_subject(
    tool_json: str, script: str, *, script_filename: str, folder: str | None
) -> Subject:
    """Load tool.json, read the script and gather what the checks share."""
    runtime = SCRIPT_FILES.get(script_filename, "python3")
    data, json_problem = load_tool_json(tool_json)
    scan = scan_python(script) if runtime == "python3" else scan_javascript(script)
    files = {"tool.json": tool_json, script_filename: script}
    if data is None:
        return Subject(data, json_problem, scan, files, folder)
    schema = data.get("parameters") if isinstance(data.get("parameters"), dict) else {}
    props = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
    raw_required = schema.get("required", [])
    required = (
        [r for r in raw_required if isinstance(r, str)] if isinstance(raw_required, list) else []
    )
    description = data.get("description")
    deps = data.get("dependencies") if isinstance(data.get("dependencies"), list) else []
    return Subject(
        data,
        json_problem,
        scan,
        files,
        folder,
        name=data.get("name"),
        parameters=data.get("parameters"),
        props={k: v for k, v in props.items() if isinstance(v, dict)},
        raw_required=raw_required,
        required=required,
        description=description if isinstance(description, str) else "",
        dependencies=[d for d in deps if isinstance(d, str)],
    )


def load_tool_json(text: str) -> tuple[dict[str, Any] | None, str | None]:
    """Parse tool.json; return its object (None if unusable) and what is wrong, if anything."""
    try:
        data = json_read(text)
    except JSONTextError as exc:
        return None, exc.problem
    if not isinstance(data, dict):
        return None, "tool.json must hold a JSON object"
    missing = [k for k in ("name", "description", "parameters") if k not in data]
    if missing:
        return data, f"missing field(s): {', '.join(missing)}"
    wrong = [k for k in ("name", "description") if not isinstance(data[k], str)]
    if wrong:
        return data, f"field(s) {', '.join(wrong)} must be strings"
    return data, None
