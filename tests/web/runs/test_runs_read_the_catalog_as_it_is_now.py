"""Registries are kept once built, yet every run reads the catalog as it is now."""

from __future__ import annotations

import pytest

from jazzmine.sandbox import SandboxBuilder
from jazzmine_web.catalog.services import registry_for_sandbox, secret_value_set, tool_update
from jazzmine_web.runs.preparation import run_claim_prepare
from jazzmine_web.runs.services import run_create

pytestmark = pytest.mark.django_db


def registry_of(sandbox):
    return registry_for_sandbox(sandbox)


def test_the_same_rows_give_the_same_registry_without_building_it_again(ecommerce):
    assert registry_of(ecommerce) is registry_of(ecommerce)


def test_an_edited_tool_is_in_the_next_runs_registry_and_image(ecommerce):
    before = registry_of(ecommerce)
    tool = ecommerce.tools.get(name="get_user")
    tool_update(tool=tool, source=tool.source.replace("Ada Lovelace", "Ada King"))
    after = registry_of(ecommerce)
    assert after is not before
    assert "Ada King" in after.get_tool(ecommerce.name, "get_user").source
    tags = {SandboxBuilder(r).image_tag(ecommerce.name) for r in (before, after)}
    assert len(tags) == 2  # the code changed, so the image does


@pytest.mark.parametrize("change", ["description", "published"])
def test_a_change_outside_the_code_is_seen_too(ecommerce, change):
    tool = ecommerce.tools.get(name="get_user")
    before = registry_of(ecommerce)
    if change == "description":
        tool_update(tool=tool, description="Look a customer up by id, now with a new word.")
        assert (
            "new word"
            in registry_of(ecommerce).get_tool(ecommerce.name, "get_user").tool.description
        )
    else:
        type(tool).objects.filter(pk=tool.pk).update(published=False)  # even a bare update
        assert "get_user" not in registry_of(ecommerce).tool_names(ecommerce.name)
    assert registry_of(ecommerce) is not before


def prepared(run, *, known_images):
    return run_claim_prepare(run_id=run.pk, worker="w1@host", known_images=known_images)


def test_a_secret_set_between_two_runs_reaches_the_second(ecommerce, member):
    first = run_create(sandbox=ecommerce, user=member, body="emit_result(1)\n", start=False)
    tag = SandboxBuilder(registry_of(ecommerce)).image_tag(ecommerce.name)
    assert prepared(first, known_images=frozenset({tag})).request.secrets == {}
    secret_value_set(sandbox=ecommerce, name="MAIL_API_TOKEN", value="s3cret", user=None)
    second = run_create(sandbox=ecommerce, user=member, body="emit_result(2)\n", start=False)
    assert prepared(second, known_images=frozenset({tag})).request.secrets == {
        "MAIL_API_TOKEN": "s3cret"
    }
