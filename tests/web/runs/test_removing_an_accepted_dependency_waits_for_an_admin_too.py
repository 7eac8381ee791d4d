"""Removing a dependency an admin accepted withholds the sandbox's secrets until an admin
accepts what is left: pip resolves the list as a whole, so a removed line can be a pin.

An admin accepts `jzreport==2.0` with `jzhelpers==1.4` beside it, pinning the version of a
package jzreport needs (any version). Before, a member could remove the pin alone ("removing
loads nothing new") and every secret kept flowing, to whatever jzhelpers the index serves
next: one the member published since, say. Nothing here is built: what pip would resolve is
the point, not a wheel (tests/web/runs/test_secrets_wait_for_an_admin_to_accept_dependencies.py
runs the same gate).
"""

from __future__ import annotations

import pytest
from django.test import Client

from jazzmine.sandbox import SandboxBuilder
from jazzmine_web.catalog.services import registry_for_sandbox, sandbox_update, secret_value_set
from jazzmine_web.runs.preparation import run_claim_prepare
from jazzmine_web.runs.services import run_create
from tests.web.helpers import sandbox_accept_post, sandbox_form_post

pytestmark = pytest.mark.django_db

SHOP = "shop-s3cret-1717"
PINNED = "jzreport==2.0\njzhelpers==1.4"


@pytest.fixture
def shop(ecommerce, admin):
    """The demo sandbox as its admin set it up: a secret, and dependencies the admin pinned."""
    sandbox_update(sandbox=ecommerce, actor=admin, secrets=["SHOP_KEY"])
    secret_value_set(sandbox=ecommerce, name="SHOP_KEY", value=SHOP, user=admin, actor=admin)
    sandbox_form_post(browser(admin), ecommerce, dependencies=PINNED)
    return ecommerce


def browser(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def prepare(sandbox, user):
    """Queue a run as the playground does and prepare it as the worker does."""
    run = run_create(sandbox=sandbox, user=user, body="emit_result(1)\n", start=False)
    tag = SandboxBuilder(registry_for_sandbox(sandbox)).image_tag(sandbox.name)
    prepared = run_claim_prepare(run_id=run.pk, worker="w1@host", known_images=frozenset({tag}))
    run.refresh_from_db()
    return run, prepared.request


def test_a_member_removing_a_pin_withholds_every_secret_until_an_admin_accepts(
    shop, member, admin
) -> None:
    assert prepare(shop, member)[1].secrets["SHOP_KEY"] == SHOP

    sandbox_form_post(browser(member), shop, dependencies="jzreport==2.0")
    run, request = prepare(shop, member)
    assert "SHOP_KEY" not in request.secrets and request.tool_secrets == {}
    assert "SHOP_KEY" in run.notes[0]
    assert "sandbox ecommerce's accepted dependencies jzhelpers==1.4 were removed" in run.notes[0]
    page = browser(admin).get(f"/catalog/sandboxes/{shop.pk}/").content.decode()
    assert 'id="dependencies-dropped"' in page and "<code>jzhelpers==1.4</code>" in page

    assert sandbox_accept_post(browser(admin), shop).status_code == 302
    run, request = prepare(shop, member)
    assert request.secrets["SHOP_KEY"] == SHOP and run.notes == []


def test_a_member_removing_every_dependency_waits_for_an_admin_too(shop, member, admin) -> None:
    sandbox_form_post(browser(member), shop, dependencies="")
    assert "SHOP_KEY" not in prepare(shop, member)[1].secrets

    sandbox_form_post(browser(member), shop, dependencies=PINNED)  # back to what was accepted
    assert prepare(shop, member)[1].secrets["SHOP_KEY"] == SHOP


def test_an_admin_removing_a_pin_accepts_what_is_left(shop, member, admin) -> None:
    sandbox_form_post(browser(admin), shop, dependencies="jzreport==2.0")
    assert prepare(shop, member)[1].secrets["SHOP_KEY"] == SHOP
