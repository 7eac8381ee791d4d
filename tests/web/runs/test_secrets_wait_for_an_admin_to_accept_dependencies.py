"""A dependency is code in every run's process: a secret reaches a run only while an admin has
accepted every dependency its image holds, the sandbox's own and its tools'.

The wheels of a sandbox's dependencies, and of every published tool's (a script tool's too),
are unpacked into the one directory the run's harness imports from. Before, a member could add
a sandbox dependency, or publish a script tool declaring one, and every secret kept flowing to
a process where that package's code ran (tests/sandbox/test_a_dependency_cannot_shadow_the_
standard_library.py shows such a wheel at work).
"""

from __future__ import annotations

import io
import json
import zipfile

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from jazzmine.sandbox import SandboxBuilder
from jazzmine_web.catalog.services import (
    registry_for_sandbox,
    sandbox_create,
    sandbox_update,
    secret_value_set,
    tool_publish,
)
from jazzmine_web.catalog.services.secrets import secrets_gate
from jazzmine_web.runs.preparation import run_claim_prepare
from jazzmine_web.runs.services import run_create
from tests.web.helpers import sandbox_accept_post, sandbox_form_post, tool_accept_post

pytestmark = pytest.mark.django_db

SCRIPT = "emit_result(send_receipt('ORD-1', 'ada@example.com').data)\n"
MAIL = "mail-s3cret-4242"
SHOP = "shop-s3cret-1717"
EVERY_SECRET = {"MAIL_API_TOKEN": MAIL, "SHOP_KEY": SHOP}


@pytest.fixture
def shop(ecommerce, admin):
    """The demo sandbox as its admin set it up: a mail token, and a secret of its own."""
    sandbox_update(sandbox=ecommerce, actor=admin, secrets=["SHOP_KEY"])
    secret_value_set(sandbox=ecommerce, name="MAIL_API_TOKEN", value=MAIL, user=admin, actor=admin)
    secret_value_set(sandbox=ecommerce, name="SHOP_KEY", value=SHOP, user=admin, actor=admin)
    return ecommerce


def browser(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def prepare(sandbox, user, body: str = SCRIPT):
    """Queue a run as the playground does and prepare it as the worker does."""
    run = run_create(sandbox=sandbox, user=user, body=body, start=False)
    tag = SandboxBuilder(registry_for_sandbox(sandbox)).image_tag(sandbox.name)
    prepared = run_claim_prepare(run_id=run.pk, worker="w1@host", known_images=frozenset({tag}))
    run.refresh_from_db()
    return run, prepared.request


def sandbox_page(user, sandbox) -> str:
    return browser(user).get(f"/catalog/sandboxes/{sandbox.pk}/").content.decode()


def script_tool_zip(**tool_json) -> SimpleUploadedFile:
    """A member's upload: one script tool, `helper`, with the given tool.json fields."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        fields = {"name": "helper", "description": "Harmless helper.",
                  "parameters": {"type": "object", "properties": {}}, **tool_json}  # fmt: skip
        archive.writestr("helper/tool.json", json.dumps(fields))
        archive.writestr("helper/script.py", "print('{}')\n")
    return SimpleUploadedFile("helper.zip", buffer.getvalue(), content_type="application/zip")


def test_a_members_new_sandbox_dependency_withholds_every_secret_until_an_admin_accepts_it(
    shop, member, admin
) -> None:
    sandbox_form_post(browser(member), shop, dependencies="jzevil==1.0")
    shop.refresh_from_db()
    assert shop.dependencies == ["jzevil==1.0"]

    run, request = prepare(shop, member)
    assert request.secrets == {} and request.tool_secrets == {}
    [note] = run.notes
    assert "MAIL_API_TOKEN" in note and "SHOP_KEY" in note
    assert "no admin has accepted sandbox ecommerce's dependencies jzevil==1.0" in note

    page = sandbox_page(member, shop)
    assert "secrets withheld until an admin accepts these dependencies" in page
    assert 'id="accept-dependencies"' not in page  # a member cannot accept
    assert sandbox_accept_post(browser(member), shop).status_code == 403
    assert prepare(shop, member)[1].secrets == {}

    assert 'id="accept-dependencies"' in sandbox_page(admin, shop)
    assert sandbox_accept_post(browser(admin), shop).status_code == 302
    # The list is accepted; no image of it was built, so no wheel file is: the page says to
    # build and accept those after (the worker withholds secrets from an image holding wheels
    # no admin accepted, tests/web/runs/test_secrets_follow_the_wheel_files_an_admin_accepted.py).
    assert 'id="wheels-unbuilt"' in sandbox_page(admin, shop)
    run, request = prepare(shop, member)
    assert request.secrets == EVERY_SECRET and run.notes == []


def test_a_version_change_of_an_accepted_dependency_waits_for_an_admin_again(
    shop, member, admin
) -> None:
    sandbox_form_post(browser(admin), shop, dependencies="jzevil==1.0")  # the admin wrote it
    assert prepare(shop, member)[1].secrets == EVERY_SECRET

    sandbox_form_post(browser(member), shop, dependencies="jzevil==2.0")
    run, request = prepare(shop, member)
    assert request.secrets == {}
    assert "sandbox ecommerce's dependencies jzevil==2.0" in run.notes[0]

    sandbox_form_post(browser(member), shop, dependencies="jzevil==1.0")  # back to the accepted
    assert prepare(shop, member)[1].secrets == EVERY_SECRET


def test_a_member_adding_a_dependency_beside_accepted_ones_waits_for_an_admin_for_it_alone(
    shop, member, admin
) -> None:
    sandbox_form_post(browser(admin), shop, dependencies="six==1.16.0")
    sandbox_form_post(browser(member), shop, dependencies="six==1.16.0\njzevil==1.0")
    run, _ = prepare(shop, member)
    assert "dependencies jzevil==1.0 " in run.notes[0] and "six" not in run.notes[0]


def test_a_sandbox_a_member_creates_with_dependencies_waits_for_an_admin(team, member) -> None:
    sandbox = sandbox_create(team=team, name="scratch", actor=member, dependencies=["jzevil"])
    assert "no admin has accepted sandbox scratch's dependencies jzevil" in (
        secrets_gate(tools=[], sandbox=sandbox).shut
    )
    bare = sandbox_create(team=team, name="bare", actor=member)
    assert secrets_gate(tools=[], sandbox=bare).shut == ""  # nothing to accept


def test_a_members_script_tool_with_dependencies_withholds_every_secret_of_the_run(
    shop, member, admin
) -> None:
    upload = script_tool_zip(dependencies=["jzevil==1.0"])
    response = browser(member).post(
        "/catalog/script-tools/import/", {"sandbox": shop.pk, "archive": upload}
    )
    assert response.status_code == 200
    helper = shop.tools.get(name="helper")
    # Published as after a passed trial (tests/web/scripttools runs the trial for real).
    tool_publish(tool=helper)

    run, request = prepare(shop, member)
    # Not only its own secrets (it declares none): its package loads beside every tool.
    assert request.secrets == {} and request.tool_secrets == {}
    assert "no admin has accepted tool helper's code yet" in run.notes[0]
    assert "a script tool's dependencies load into the run's process" in run.notes[0]
    page = browser(member).get(f"/catalog/tools/{helper.pk}/").content.decode()
    assert "secrets withheld until an admin accepts this code" in page

    assert tool_accept_post(browser(admin), helper).status_code == 302
    run, request = prepare(shop, member)
    assert request.secrets == EVERY_SECRET and run.notes == []


def test_a_members_script_tool_without_dependencies_withholds_no_other_tools_secret(
    shop, member
) -> None:
    upload = script_tool_zip()
    browser(member).post("/catalog/script-tools/import/", {"sandbox": shop.pk, "archive": upload})
    tool_publish(tool=shop.tools.get(name="helper"))
    # It runs as a process of its own, and nothing of it loads into the run's.
    run, request = prepare(shop, member)
    assert request.secrets == EVERY_SECRET and run.notes == []
