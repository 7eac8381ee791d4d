from __future__ import annotations

import pytest

from jazzmine_web.catalog.models import SecretValue
from jazzmine_web.catalog.selectors import sandbox_secret_statuses, sandbox_secret_values
from jazzmine_web.catalog.services import secret_value_clear, secret_value_set

pytestmark = pytest.mark.django_db


def test_a_secret_is_stored_encrypted_and_readable_by_runs(ecommerce, user) -> None:
    secret_value_set(sandbox=ecommerce, name="MAIL_API_TOKEN", value="s3cr3t-value", user=user)
    row = SecretValue.objects.get()
    assert "s3cr3t-value" not in row.ciphertext
    assert sandbox_secret_values(ecommerce) == {"MAIL_API_TOKEN": "s3cr3t-value"}


def test_statuses_say_set_or_not_set_and_who_set_it(ecommerce, user) -> None:
    (before,) = sandbox_secret_statuses(ecommerce)
    assert (before.name, before.is_set, before.set_by) == ("MAIL_API_TOKEN", False, None)
    secret_value_set(sandbox=ecommerce, name="MAIL_API_TOKEN", value="v", user=user)
    (after,) = sandbox_secret_statuses(ecommerce)
    assert after.is_set and after.set_by == "ada" and after.set_at is not None
    assert secret_value_clear(sandbox=ecommerce, name="MAIL_API_TOKEN")
    assert not sandbox_secret_statuses(ecommerce)[0].is_set


def test_the_sandbox_page_sets_a_value_and_never_shows_it(client, team_admin, ecommerce) -> None:
    client.force_login(team_admin)
    url = f"/catalog/sandboxes/{ecommerce.pk}/secrets/"
    response = client.post(url, {"name": "MAIL_API_TOKEN", "value": "hunter2-very-secret"})
    assert response.status_code == 302
    page = client.get(f"/catalog/sandboxes/{ecommerce.pk}/").content.decode()
    assert "hunter2-very-secret" not in page
    assert "set</span>" in page
    assert 'type="password"' in page


def test_it_refuses_a_secret_the_sandbox_does_not_need(client, team_admin, ecommerce) -> None:
    client.force_login(team_admin)
    response = client.post(
        f"/catalog/sandboxes/{ecommerce.pk}/secrets/",
        {"name": "OTHER", "value": "x"},
        HTTP_HX_REQUEST="true",
    )
    assert response.status_code == 422
    assert not SecretValue.objects.exists()


def test_the_sandbox_page_says_which_tools_a_secret_is_given_to(
    client, team_admin, ecommerce
) -> None:
    # MAIL_API_TOKEN is send_receipt's alone; a secret the sandbox declares is every tool's.
    (status,) = sandbox_secret_statuses(ecommerce)
    assert status.tools == ("send_receipt",)
    client.force_login(team_admin)
    page = client.get(f"/catalog/sandboxes/{ecommerce.pk}/").content.decode()
    assert "<code>send_receipt</code> only, while it runs" in page
    ecommerce.secrets = ["MAIL_API_TOKEN"]
    ecommerce.save()
    (status,) = sandbox_secret_statuses(ecommerce)
    assert status.tools == ()
    page = client.get(f"/catalog/sandboxes/{ecommerce.pk}/").content.decode()
    assert "every tool" in page and "only, while it runs" not in page
