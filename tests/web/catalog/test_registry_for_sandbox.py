from __future__ import annotations

import importlib

import pytest

from jazzmine_web.catalog.models import ToolKind
from jazzmine_web.catalog.services import registry_for_sandbox

pytestmark = pytest.mark.django_db


def test_it_computes_the_same_prompt_and_checksums_as_the_core(ecommerce) -> None:
    live = importlib.import_module("demo.ecommerce").registry
    built = registry_for_sandbox(ecommerce)
    assert built.build_tools_prompt("ecommerce") == live.build_tools_prompt("ecommerce")
    assert built.sandbox_checksum("ecommerce") == live.sandbox_checksum("ecommerce")
    assert {t.name: t.checksum for t in built.tools("ecommerce")} == {
        t.name: t.checksum for t in live.tools("ecommerce")
    }
    assert built.aggregate_secrets("ecommerce") == ["MAIL_API_TOKEN"]


def test_it_keeps_what_the_core_derives_on_the_rows(ecommerce) -> None:
    search = ecommerce.tools.get(name="search_products")
    assert search.is_async
    assert search.source.startswith("async def search_products(")
    assert "@registry.tool" not in search.source
    registered = registry_for_sandbox(ecommerce).get_tool("ecommerce", "search_products")
    assert search.checksum == registered.checksum


def test_it_leaves_script_tools_to_their_own_loader(ecommerce) -> None:
    ecommerce.tools.filter(name="get_user").update(kind=ToolKind.SCRIPT)
    names = [t.name for t in registry_for_sandbox(ecommerce).tools("ecommerce")]
    assert "get_user" not in names
    assert len(names) == 4


def test_the_same_rows_share_one_frozen_registry(ecommerce) -> None:
    first = registry_for_sandbox(ecommerce)
    assert registry_for_sandbox(ecommerce) is first
    assert first.frozen
    with pytest.raises(RuntimeError, match="read-only"):
        first.register_source("def x() -> None:\n    pass\n", sandbox="ecommerce", description="x")
    with pytest.raises(RuntimeError, match="read-only"):
        first.unregister("ecommerce", "get_user")
    # Nothing a refused change tried is visible to the next caller.
    assert registry_for_sandbox(ecommerce).tool_names("ecommerce") == first.tool_names("ecommerce")


@pytest.mark.parametrize(
    "change",
    [
        # Writes that bypass save() (no auto_now column moves) must still be seen.
        lambda sandbox: sandbox.tools.filter(name="get_user").update(published=False),
        lambda sandbox: sandbox.tools.filter(name="get_user").update(
            description="Look a user up by id, again."
        ),
        lambda sandbox: sandbox.tools.filter(name="get_user").update(secrets=["OTHER_TOKEN"]),
        lambda sandbox: sandbox.tools.filter(name="get_user").delete(),
        lambda sandbox: (
            type(sandbox).objects.filter(pk=sandbox.pk).update(dependencies=["requests==2.32.3"])
        ),
    ],
    ids=["unpublished", "description", "secrets", "deleted", "sandbox-dependencies"],
)
def test_any_change_of_the_rows_builds_a_new_registry(ecommerce, change) -> None:
    def seen(registry):  # what an LLM, an image and a run get from a registry
        return (
            registry.build_tools_prompt("ecommerce"),
            registry.sandbox_checksum("ecommerce"),
            registry.aggregate_secrets("ecommerce"),
        )

    before = registry_for_sandbox(ecommerce)
    change(ecommerce)
    ecommerce.refresh_from_db()
    after = registry_for_sandbox(ecommerce)
    assert after is not before
    assert seen(after) != seen(before)


def test_the_deployments_limits_are_part_of_what_is_shared(ecommerce, settings) -> None:
    before = registry_for_sandbox(ecommerce).get_sandbox("ecommerce")
    settings.JAZZMINE_MAX_SANDBOX_MEMORY_MB = before.memory_mb - 1
    after = registry_for_sandbox(ecommerce).get_sandbox("ecommerce")
    assert after.memory_mb == before.memory_mb - 1


def test_unpublished_tools_are_asked_for_apart(ecommerce) -> None:
    ecommerce.tools.filter(name="get_user").update(published=False)
    assert "get_user" not in registry_for_sandbox(ecommerce).tool_names("ecommerce")
    everything = registry_for_sandbox(ecommerce, include_unpublished=True)
    assert "get_user" in everything.tool_names("ecommerce")
    assert "get_user" not in registry_for_sandbox(ecommerce).tool_names("ecommerce")
