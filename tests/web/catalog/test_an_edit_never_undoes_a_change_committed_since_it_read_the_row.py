"""An edit writes on the row as it is now, not on the copy its request read.

A service was given a row read when the request began and saved it whole: a person's edit of a
description undid, without a word, an admin's narrower limits or accepted wheel files committed
in between, and an edit of a row deleted meanwhile inserted it again, without its tools. Here
each stale copy is one a request would hold (read before the other change committed), and the
other change is made through the services as a person makes it.
"""

from __future__ import annotations

import pytest
from django.core.exceptions import PermissionDenied, ValidationError

from jazzmine_web.catalog.models import Sandbox, Tool
from jazzmine_web.catalog.services import (
    sandbox_delete,
    sandbox_dependencies_accept,
    sandbox_update,
    tool_code_accept,
    tool_update,
)

from .test_an_admin_accepts_only_the_wheel_files_the_page_showed import SEEN, built

pytestmark = pytest.mark.django_db


def stale(row):
    """A copy of the row as a request that began now holds it."""
    return type(row).objects.get(pk=row.pk)


def test_a_members_edit_keeps_the_limits_an_admin_narrowed_meanwhile(ecommerce, admin, member):
    members_copy = stale(ecommerce)
    narrower = {"memory_mb": 128, "timeout_seconds": 5, "pids_limit": 32}
    assert sandbox_update(sandbox=stale(ecommerce), actor=admin, **narrower)
    assert sandbox_update(sandbox=members_copy, actor=member, description="orders and users")
    row = Sandbox.objects.get(pk=ecommerce.pk)
    assert (row.memory_mb, row.timeout_seconds, row.pids_limit) == (128, 5, 32)
    assert row.description == "orders and users"
    # The member's copy now shows the row as it is: what the page shows next.
    assert members_copy.memory_mb == 128


def test_a_members_stale_form_cannot_put_back_what_an_admin_changed(ecommerce, admin, member):
    members_copy = stale(ecommerce)
    before = members_copy.timeout_seconds
    sandbox_update(sandbox=stale(ecommerce), actor=admin, timeout_seconds=5)
    # A form posts every field: the member's still says the old timeout, an admin's field.
    with pytest.raises(PermissionDenied):
        sandbox_update(sandbox=members_copy, actor=member, timeout_seconds=before,
                       description="x")  # fmt: skip
    row = Sandbox.objects.get(pk=ecommerce.pk)
    assert (row.timeout_seconds, row.description) == (5, ecommerce.description)


def test_a_members_edit_keeps_the_wheel_files_an_admin_accepted_meanwhile(ecommerce, admin, member):
    sandbox_update(sandbox=stale(ecommerce), actor=admin, dependencies=["jzlock==1.0"])
    built(stale(ecommerce), SEEN)  # a build of the sandbox as it is now
    members_copy = stale(ecommerce)
    assert members_copy.accepted_wheels is None
    sandbox_dependencies_accept(sandbox=stale(ecommerce), actor=admin)
    sandbox_update(sandbox=members_copy, actor=member, description="with a lock")
    row = Sandbox.objects.get(pk=ecommerce.pk)
    assert row.accepted_wheels == SEEN and row.dependencies_accepted
    assert row.description == "with a lock"


def test_an_acceptance_judges_the_dependencies_as_they_are_now(ecommerce, admin, member):
    sandbox_update(sandbox=stale(ecommerce), actor=admin, dependencies=["jzlock==1.0"])
    admins_copy = stale(ecommerce)  # the page the admin read
    sandbox_update(sandbox=stale(ecommerce), actor=member, dependencies=["jzlock==1.0", "evil"])
    with pytest.raises(ValidationError, match="changed since you looked"):
        sandbox_dependencies_accept(
            sandbox=admins_copy, actor=admin, seen=["jzlock==1.0"], seen_wheels=""
        )
    row = Sandbox.objects.get(pk=ecommerce.pk)
    assert not row.dependencies_accepted and row.accepted_dependencies == ["jzlock==1.0"]


def test_an_edit_of_a_sandbox_deleted_meanwhile_brings_nothing_back(ecommerce, admin, member):
    members_copy = stale(ecommerce)
    sandbox_delete(sandbox=stale(ecommerce), actor=admin)
    for _ in range(2):
        with pytest.raises(ValidationError, match="deleted meanwhile; nothing was changed"):
            sandbox_update(sandbox=members_copy, actor=member, description="back again?")
        assert not Sandbox.objects.filter(pk=ecommerce.pk).exists()
        assert not Tool.objects.filter(sandbox_id=ecommerce.pk).exists()


def test_a_members_tool_edit_keeps_what_an_admin_set_meanwhile(ecommerce, admin, member):
    tool = Tool.objects.filter(sandbox=ecommerce).order_by("name").first()
    members_copy = stale(tool)
    tool_update(tool=stale(tool), actor=admin, secrets=["SHOP_TOKEN"], always_allow=True)
    tool_update(tool=members_copy, actor=member, description="Look a thing up, carefully.")
    row = Tool.objects.get(pk=tool.pk)
    assert row.secrets == ["SHOP_TOKEN"] and row.always_allow and row.is_always_allowed
    assert row.description == "Look a thing up, carefully."


def test_a_code_acceptance_judges_the_code_as_it_is_now(ecommerce, admin, member):
    tool = Tool.objects.filter(sandbox=ecommerce).order_by("name").first()
    admins_copy = stale(tool)  # the page the admin read
    tool_update(tool=stale(tool), actor=member, dependencies=["jzlock==1.0"])
    assert stale(tool).code_digest != tool.code_digest
    with pytest.raises(ValidationError):
        tool_code_accept(tool=admins_copy, actor=admin, seen_digest=tool.code_digest)
    row = Tool.objects.get(pk=tool.pk)
    assert row.dependencies == ["jzlock==1.0"] and not row.code_accepted
