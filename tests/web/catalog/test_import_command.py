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


@pytest.mark.parametrize("how", ["file", "folder"])
def test_a_linked_file_is_refused_and_never_read(team, tmp_path, how) -> None:
    # Its target may be any file the process reads: `/etc/passwd`, the secrets key. Its text
    # came back in the syntax error.
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.py").write_text("SECRET-TEXT-0099 = (\n")
    tools = tmp_path / "tools"
    tools.mkdir()
    if how == "file":
        (tools / "linked.py").symlink_to(outside / "secret.py")
    else:
        (tools / "linked").symlink_to(outside, target_is_directory=True)
    # A linked folder is not walked into at all (nothing found); a linked file is refused.
    said = "is a symbolic link" if how == "file" else "No .py files"
    with pytest.raises(CommandError, match=said) as refused:
        call_command("import_tools", str(tools), team="shop")
    assert "SECRET-TEXT" not in str(refused.value)
    assert not Tool.objects.exists()
