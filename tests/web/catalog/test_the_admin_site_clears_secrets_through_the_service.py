"""Clearing a secret value in the Django admin is the service's: team admins only, audited."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Permission
from django.test import Client

from jazzmine_web.catalog.models import SecretValue
from jazzmine_web.reviews.models import AuditEntry

pytestmark = pytest.mark.django_db


@pytest.fixture
def secret(ecommerce) -> SecretValue:
    return SecretValue.objects.create(sandbox=ecommerce, name="MAIL_API_TOKEN", ciphertext="c")


def test_a_staff_member_cannot_clear_a_secret_in_the_admin(member, secret) -> None:
    member.is_staff = True
    member.save()
    member.user_permissions.add(*Permission.objects.filter(content_type__app_label="catalog"))
    client = Client()
    client.force_login(member)
    response = client.post(f"/admin/catalog/secretvalue/{secret.pk}/delete/", {"post": "yes"})
    assert response.status_code == 403
    assert SecretValue.objects.filter(pk=secret.pk).exists()


def test_a_superusers_clearing_in_the_admin_is_audited(django_user_model, secret) -> None:
    root = django_user_model.objects.create_superuser(username="root", password="x" * 12)
    client = Client()
    client.force_login(root)
    response = client.post(f"/admin/catalog/secretvalue/{secret.pk}/delete/", {"post": "yes"})
    assert response.status_code == 302
    assert not SecretValue.objects.filter(pk=secret.pk).exists()
    entry = AuditEntry.objects.get(action="secret_cleared")
    assert (entry.actor_label, entry.sandbox_id) == ("root", secret.sandbox_id)
