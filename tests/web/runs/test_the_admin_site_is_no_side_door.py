"""The Django admin neither deletes a run from under its worker nor writes events into it."""

from __future__ import annotations

import pytest
from django.test import Client

from jazzmine_web.runs.models import Run
from jazzmine_web.runs.services import run_create

pytestmark = pytest.mark.django_db


def test_a_run_is_not_deleted_in_the_admin(django_user_model, ecommerce, member) -> None:
    run = run_create(sandbox=ecommerce, user=member, body="emit_result(1)\n", start=False)
    root = django_user_model.objects.create_superuser(username="root", password="x" * 12)
    client = Client()
    client.force_login(root)
    response = client.post(f"/admin/runs/run/{run.pk}/delete/", {"post": "yes"})
    assert response.status_code == 403
    assert Run.objects.filter(pk=run.pk).exists()


def test_a_run_is_not_saved_in_the_admin_over_what_its_worker_wrote(
    django_user_model, ecommerce, member
) -> None:
    """Every field was read-only, but the change page still saved the row as it had read it:
    a press while the worker ended the run wrote `running` (and the old heartbeat) back."""
    run = run_create(sandbox=ecommerce, user=member, body="emit_result(1)\n", start=False)
    root = django_user_model.objects.create_superuser(username="root", password="x" * 12)
    client = Client()
    client.force_login(root)
    page = client.get(f"/admin/runs/run/{run.pk}/change/")
    assert page.status_code == 200 and 'name="_save"' not in page.content.decode()
    assert client.post(f"/admin/runs/run/{run.pk}/change/", {"_save": "Save"}).status_code == 403
