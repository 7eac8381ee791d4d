"""A sandbox save the services refuse shows the admin's form again saying why: never a 500.

The sandbox admin saves through `sandbox_update` / `sandbox_create`, which refuse a pip option
where a requirement belongs, a base image off the operator's list or a limit out of bounds.
Each was a 500 with a traceback; the form now says the rule, and nothing of the save is
stored. Here, as a team admin with the catalog's admin
permissions posts the admin's own form.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.test import Client

from jazzmine_web.catalog.models import Sandbox
from jazzmine_web.reviews.models import AuditEntry
from tests.web.admin.forms import admin_form
from tests.web.helpers import staff_browser

pytestmark = pytest.mark.django_db


@pytest.fixture
def browser(team_admin) -> Client:
    """The team admin's browser, staff with the catalog's admin permissions."""
    return staff_browser(team_admin, "catalog")


def change_url(sandbox: Sandbox) -> str:
    return f"/admin/catalog/sandbox/{sandbox.pk}/change/"


def snapshot(sandbox: Sandbox) -> dict[str, Any]:
    """Return what a save could have changed: the sandbox's columns and the audit."""
    sandbox.refresh_from_db()
    columns = {f.attname: getattr(sandbox, f.attname) for f in Sandbox._meta.concrete_fields}
    return {**columns, "audit": AuditEntry.objects.count()}


def form_errors(response) -> str:
    return " ".join(response.context["adminform"].form.non_field_errors())


@pytest.mark.parametrize(
    ("changes", "said"),
    [
        # A pip option where a requirement belongs, in the spellings pip reads.
        ({"dependencies": json.dumps(["--index-url=https://pypi.evil.example/simple"])}, "option"),
        ({"dependencies": json.dumps(["-i https://pypi.evil.example/simple"])}, "option"),
        ({"dependencies": json.dumps(["requests @ https://evil.example/r.whl"])}, "URL"),
        ({"base_image": "evil.example/python:3.11-slim"}, "base image"),
        ({"bash_max_commands": "999999999"}, "bash_max_commands"),
        ({"memory_mb": "999999999"}, "memory"),
        ({"memory_mb": "0"}, "memory"),
        ({"cpus": "100"}, "cpus"),
        ({"bash_timeout_seconds": "-1"}, "bash_timeout_seconds"),
        ({"dependencies": json.dumps(["-r /etc/passwd"])}, "option"),
        ({"dependencies": json.dumps("six")}, "list"),
        ({"secrets": json.dumps(["PATH"])}, "PATH"),
    ],
)
def test_a_refused_change_shows_the_form_again_and_stores_nothing(
    browser, ecommerce, changes, said
) -> None:
    before = snapshot(ecommerce)
    for _attempt in range(2):  # and again, as a person who pressed Save twice
        response = browser.post(
            change_url(ecommerce), admin_form(browser, change_url(ecommerce), **changes)
        )
        assert response.status_code == 200, response.status_code
        errors = form_errors(response)
        assert said.lower() in errors.lower(), errors
        assert snapshot(ecommerce) == before
    # The page still opens, and a change the rules allow is saved as before.
    response = browser.post(
        change_url(ecommerce), admin_form(browser, change_url(ecommerce), description="Orders.")
    )
    assert response.status_code == 302, form_errors(response)
    ecommerce.refresh_from_db()
    assert ecommerce.description == "Orders."


def test_a_new_sandbox_the_rules_refuse_is_not_made(browser, ecommerce, team) -> None:
    add = admin_form(browser, "/admin/catalog/sandbox/add/", team=team.pk, name="shipping")
    count, audit = Sandbox.objects.count(), AuditEntry.objects.count()
    for changes, said in (
        ({"name": "ecommerce"}, "already exists"),  # the form's own unique check
        ({"dependencies": json.dumps(["--extra-index-url", "https://evil.example"])}, "option"),
        ({"base_image": "evil.example/python:3.11-slim"}, "base image"),
    ):
        response = browser.post("/admin/catalog/sandbox/add/", {**add, **changes})
        assert response.status_code == 200, response.status_code
        assert said.lower() in form_errors(response).lower(), form_errors(response)
        assert (Sandbox.objects.count(), AuditEntry.objects.count()) == (count, audit)
    # Another name is made, through the service (its audit row says so).
    response = browser.post("/admin/catalog/sandbox/add/", {**add, "name": "shipping"})
    assert response.status_code == 302, form_errors(response)
    made = Sandbox.objects.get(team=team, name="shipping")
    assert AuditEntry.objects.filter(sandbox=made).exists()
