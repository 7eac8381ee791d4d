from __future__ import annotations

import pytest

from jazzmine_web.catalog.importer import ImportRefused
from jazzmine_web.catalog.models import Sandbox, Tool, ToolVersion
from jazzmine_web.catalog.services import tools_import
from tests.web.helpers import DEMO, source_file

pytestmark = pytest.mark.django_db

MODULE = """
from jazzmine.core.tools import SandboxConfig, ToolParameter, ToolResponse, registry, tool
import jazzmine.core.tools as jt

registry.register_sandbox(SandboxConfig(name="ops", dependencies=["httpx"], memory_mb=512, network=True))


@tool("Ping a host.", [ToolParameter("host", "str", "Where.", required=True)], sandbox="ops")
def ping(host: str) -> ToolResponse:
    return ToolResponse(success=True, data=host)


@jt.registry.tool(
    description="Count things.",
    parameters=[jt.ToolParameter(name="n", type="int", default=-1, options=[1, 2.5, None])],
    secrets=["OPS_TOKEN"],
    sandbox="ops",
    name="count_things",
)
async def count(n: int = -1) -> ToolResponse:
    return ToolResponse(success=True, data=n)


def helper():  # not a tool
    return 1
"""


def test_it_finds_tools_with_any_decorator_spelling_and_the_sandbox_profile(team, user) -> None:
    report = tools_import(team=team, files=[source_file("ops.py", MODULE)], author=user)
    assert sorted(report.created) == ["count_things", "ping"]
    assert report.sandboxes_created == ["ops"]
    ops = Sandbox.objects.get(team=team, name="ops")
    assert (ops.dependencies, ops.memory_mb, ops.network) == (["httpx"], 512, True)
    count = Tool.objects.get(name="count_things")
    assert count.function_name == "count" and count.is_async
    assert count.secrets == ["OPS_TOKEN"]
    assert count.parameters[0]["default"] == -1
    assert count.parameters[0]["options"] == [1, 2.5, None]
    ping = Tool.objects.get(name="ping")
    assert ping.parameters[0]["required"] is True
    assert ping.versions.get().note == "Imported from ops.py"


def test_reimporting_an_unchanged_file_changes_nothing(team, user) -> None:
    files = [source_file("ops.py", MODULE)]
    tools_import(team=team, files=files, author=user)
    stamps = dict(Tool.objects.values_list("name", "updated_at"))
    sandbox_stamp = Sandbox.objects.get(name="ops").updated_at
    report = tools_import(team=team, files=files, author=user)
    assert not report.changed_anything
    assert sorted(report.unchanged) == ["count_things", "ping"]
    assert dict(Tool.objects.values_list("name", "updated_at")) == stamps
    assert Sandbox.objects.get(name="ops").updated_at == sandbox_stamp
    assert ToolVersion.objects.count() == 2


def test_reimporting_a_changed_file_versions_and_names_the_changed_tools(team, user) -> None:
    tools_import(team=team, files=[source_file("ops.py", MODULE)], author=user)
    edited = MODULE.replace("data=host", "data={'host': host}").replace(
        '"Ping a host."', '"Ping one host."'
    )
    report = tools_import(team=team, files=[source_file("ops.py", edited)], author=user)
    assert report.changed == ["ping"]
    assert report.unchanged == ["count_things"]
    ping = Tool.objects.get(name="ping")
    assert ping.description == "Ping one host."
    assert ping.versions.count() == 2


def test_an_explicit_sandbox_takes_every_tool(team, user) -> None:
    report = tools_import(
        team=team, files=[source_file("ops.py", MODULE)], author=user, sandbox_name="misc"
    )
    assert report.sandboxes_created == ["misc"]
    assert set(Tool.objects.values_list("sandbox__name", flat=True)) == {"misc"}
    assert any("'ops' ignored" in note for note in report.notes)


def test_the_demo_module_imports_with_its_profile(team, user) -> None:
    data = DEMO.read_bytes()
    report = tools_import(team=team, files=[source_file("ecommerce.py", data)], author=user)
    assert len(report.created) == 5
    assert Sandbox.objects.get(name="ecommerce").timeout_seconds == 20.0


@pytest.mark.parametrize("spelling", ['sandbox=""', "sandbox='  '"])
def test_an_empty_sandbox_is_refused_as_the_core_refuses_it(team, user, spelling) -> None:
    # Read as "default" it put the tool where its author never said; the core's registry
    # refuses it as an unknown sandbox.
    source = MODULE.replace('sandbox="ops")\ndef ping', f"{spelling})\ndef ping")
    assert spelling in source
    with pytest.raises(ImportRefused) as refused:
        tools_import(team=team, files=[source_file("ops.py", source)], author=user)
    assert any("sandbox is empty" in problem.message for problem in refused.value.problems)
    assert not Tool.objects.exists()
