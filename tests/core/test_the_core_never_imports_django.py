"""`jazzmine/` is the framework-independent core: no module under it imports Django or the web app."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FORBIDDEN = ("django", "jazzmine_web")


def test_no_module_of_the_core_imports_django_or_the_web_app() -> None:
    wrong = []
    for path in sorted((ROOT / "jazzmine").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level:
                names = [node.module or ""]
            else:
                continue
            wrong += [
                f"{path.relative_to(ROOT)}:{node.lineno} imports {name}"
                for name in names
                if name.split(".")[0] in FORBIDDEN
            ]
    assert not wrong, "\n".join(wrong)
