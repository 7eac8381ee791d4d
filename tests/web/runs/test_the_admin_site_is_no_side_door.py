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
