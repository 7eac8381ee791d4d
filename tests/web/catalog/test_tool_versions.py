from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError

from jazzmine_web.catalog.selectors import tool_version_diff
from jazzmine_web.catalog.services import tool_create, tool_rollback, tool_update

pytestmark = pytest.mark.django_db

SOURCE = "def greet(name: str) -> ToolResponse:\n    return ToolResponse(success=True, data=name)\n"
PARAMS = [{"name": "name", "type": "str", "required": True}]


@pytest.fixture
def greet(empty_sandbox, user):
    return tool_create(
        sandbox=empty_sandbox,
        name="greet",
        description="Greet someone.",
        source=SOURCE,
        parameters=PARAMS,
        author=user,
    )


def test_creating_a_tool_makes_version_one(greet, user) -> None:
    (version,) = greet.versions.all()
    assert version.number == 1
    assert version.checksum == greet.checksum
    assert version.author == user
    assert greet.parameters[0]["required"] is True
    assert set(greet.parameters[0]) == {
        "name", "type", "description", "default", "required", "options", "examples",
        "source", "display_name",
    }  # fmt: skip


def test_editing_only_the_description_makes_a_version_with_the_same_checksum(greet) -> None:
    checksum = greet.checksum
    change = tool_update(tool=greet, description="Say hello to someone.")
    assert change.changed and change.new_version.number == 2
    assert change.prompt_changed and not change.code_changed
    assert change.new_version.checksum == greet.checksum == checksum


def test_editing_only_the_tags_makes_no_version(greet) -> None:
    change = tool_update(tool=greet, tags=["people"])
    assert change.changed and change.new_version is None
    assert greet.versions.count() == 1


def test_changing_code_or_dependencies_makes_a_new_version(greet, user) -> None:
    old = greet.checksum
    change = tool_update(tool=greet, author=user, source=SOURCE.replace("data=name", "data=[name]"))
    assert change.new_version.number == 2
    assert greet.checksum != old
    change = tool_update(tool=greet, dependencies=["httpx"], note="needs http")
    assert change.new_version.number == 3
    assert change.new_version.note == "needs http"
    assert change.new_version.dependencies == ["httpx"]


def test_saving_the_same_values_changes_nothing(greet) -> None:
    change = tool_update(tool=greet, source=SOURCE, parameters=PARAMS)
    assert not change.changed


def test_a_version_diff_shows_the_changed_lines(greet) -> None:
    tool_update(tool=greet, source=SOURCE.replace("data=name", "data=[name]"))
    diff = tool_version_diff(greet.versions.get(number=2)).code
    assert "-    return ToolResponse(success=True, data=name)" in diff
    assert "+    return ToolResponse(success=True, data=[name])" in diff


def test_rolling_back_restores_the_code_as_a_new_version(greet, user) -> None:
    first = greet.checksum
    tool_update(tool=greet, source=SOURCE.replace("data=name", "data=[name]"), dependencies=["x"])
    change = tool_rollback(tool=greet, version=greet.versions.get(number=1), author=user)
    greet.refresh_from_db()
    assert change.new_version.number == 3
    assert change.new_version.note == "Rolled back to v1"
    assert greet.checksum == first
    assert greet.source == SOURCE
    assert greet.dependencies == []


def test_versions_cannot_be_changed_after_the_fact(greet) -> None:
    version = greet.versions.get()
    version.source = "def greet(): pass\n"
    with pytest.raises(ValueError, match="immutable"):
        version.save()


def test_it_refuses_a_tool_the_core_refuses(empty_sandbox) -> None:
    with pytest.raises(ValidationError, match="needs a description"):
        tool_create(sandbox=empty_sandbox, name="x", description=" ", source=SOURCE)
    with pytest.raises(ValidationError, match="does not accept"):
        tool_create(
            sandbox=empty_sandbox,
            name="greet",
            description="d",
            source=SOURCE,
            parameters=[{"name": "nope", "type": "str"}],
        )
    with pytest.raises(ValidationError, match="syntax"):
        tool_create(sandbox=empty_sandbox, name="x", description="d", source="def x(:\n")
