from __future__ import annotations

import pytest

from jazzmine_web.catalog.importer import ImportRefused
from jazzmine_web.catalog.models import Tool
from jazzmine_web.catalog.services import tools_import
from tests.web.helpers import source_file

pytestmark = pytest.mark.django_db


def test_importing_never_runs_the_files_top_level(team, user, tmp_path) -> None:
    marker = tmp_path / "executed"
    text = f"""
import pathlib
pathlib.Path({str(marker)!r}).write_text("the importer ran me")


@tool(description=pathlib.Path({str(marker)!r}).write_text("x") and "no")
def bad() -> ToolResponse:
    pass


@tool(description="Harmless.")
def harmless() -> ToolResponse:
    import pathlib  # its own: the module's is not kept

    pathlib.Path({str(marker)!r}).write_text("a tool body ran")
    return ToolResponse(success=True)
"""
    with pytest.raises(ImportRefused, match="argument 'description' is not a literal"):
        tools_import(team=team, files=[source_file("evil.py", text)], author=user)
    assert not marker.exists()
    fixed = text.replace(f'pathlib.Path({str(marker)!r}).write_text("x") and "no"', '"fine"')
    tools_import(team=team, files=[source_file("evil.py", fixed)], author=user)
    assert Tool.objects.count() == 2
    assert not marker.exists()
