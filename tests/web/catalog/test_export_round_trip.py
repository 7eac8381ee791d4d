from __future__ import annotations

import json
import subprocess
import sys

import pytest
from django.conf import settings

from jazzmine_web.catalog.models import Sandbox
from jazzmine_web.catalog.selectors import sandbox_export_module
from jazzmine_web.catalog.services import registry_for_sandbox, tool_update, tools_import
from jazzmine_web.teams.services import team_create
from tests.web.helpers import source_file

pytestmark = pytest.mark.django_db

PROBE = """
import importlib, json, sys, warnings
sys.path.insert(0, sys.argv[1])
warnings.simplefilter("error")
module = importlib.import_module("exported")
reg = module.registry
print(json.dumps({
    "sandbox": reg.sandbox_checksum(sys.argv[2]),
    "tools": {t.name: t.checksum for t in reg.tools(sys.argv[2])},
    "prompt": reg.build_tools_prompt(sys.argv[2]),
}))
"""


def core_view_of(module_text: str, sandbox: str, tmp_path) -> dict:
    (tmp_path / "exported.py").write_text(module_text)
    result = subprocess.run(
        [sys.executable, "-c", PROBE, str(tmp_path), sandbox],
        capture_output=True,
        text=True,
        cwd=settings.BASE_DIR,
        check=True,
    )
    return json.loads(result.stdout)


def test_an_exported_sandbox_imports_into_the_core_with_the_same_checksums(
    ecommerce, tmp_path
) -> None:
    tool_update(tool=ecommerce.tools.get(name="get_user"), name="fetch_user", tags=["users"])
    ecommerce.refresh_from_db()
    registry = registry_for_sandbox(ecommerce)
    seen = core_view_of(sandbox_export_module(ecommerce), "ecommerce", tmp_path)
    assert seen["sandbox"] == registry.sandbox_checksum("ecommerce")
    assert seen["tools"] == {t.name: t.checksum for t in registry.tools("ecommerce")}
    assert seen["prompt"] == registry.build_tools_prompt("ecommerce")


def test_an_exported_sandbox_reimports_through_the_importer_unchanged(ecommerce, user) -> None:
    text = sandbox_export_module(ecommerce)
    other = team_create(name="Other", slug="other")
    report = tools_import(team=other, files=[source_file("exported.py", text)], author=user)
    assert len(report.created) == 5
    copy = Sandbox.objects.get(team=other, name="ecommerce")
    assert registry_for_sandbox(copy).sandbox_checksum("ecommerce") == registry_for_sandbox(
        ecommerce
    ).sandbox_checksum("ecommerce")
    assert copy.timeout_seconds == ecommerce.timeout_seconds
    again = tools_import(team=ecommerce.team, files=[source_file("exported.py", text)], author=user)
    assert not again.changed_anything
