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
