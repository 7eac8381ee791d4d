from __future__ import annotations

import shutil

import pytest
from django.core.management import CommandError, call_command

from jazzmine_web.catalog.models import Tool
from tests.web.helpers import DEMO

pytestmark = pytest.mark.django_db


def test_it_imports_a_folder_into_a_team_sandbox(team, user, tmp_path, capsys) -> None:
    shutil.copy(DEMO, tmp_path / "ecommerce.py")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "extra.py").write_text(
        '@tool(description="Extra.")\ndef extra() -> ToolResponse:\n    return ToolResponse(success=True)\n'
    )
    call_command("import_tools", str(tmp_path), team="shop", sandbox="shop-tools", author="ada")
    assert "created:" in capsys.readouterr().out
    assert Tool.objects.filter(sandbox__name="shop-tools").count() == 6
    call_command("import_tools", str(tmp_path), team="shop", sandbox="shop-tools")
    assert capsys.readouterr().out.startswith("unchanged:")


def test_it_reports_every_problem_and_imports_nothing(team, tmp_path) -> None:
    (tmp_path / "a.py").write_text("def (:\n")
    (tmp_path / "b.py").write_text('@tool(description="B.")\ndef b(): pass\n')
    with pytest.raises(CommandError, match=r"a\.py, line 1: syntax error"):
        call_command("import_tools", str(tmp_path), team="shop")
    assert not Tool.objects.exists()


def test_it_names_an_unknown_team(tmp_path, db) -> None:
    (tmp_path / "a.py").write_text("")
    with pytest.raises(CommandError, match="No team with slug 'nope'"):
        call_command("import_tools", str(tmp_path), team="nope")
