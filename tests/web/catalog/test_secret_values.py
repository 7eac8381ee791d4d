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


def test_a_value_too_big_to_reach_any_tool_is_refused_naming_the_limit(
    client, team_admin, ecommerce
) -> None:
    # 200,000 characters saved, then every trial of the tool failed "argument list too long"
    # and a 1.5 MB one took every tool's own secrets from the runs, said only in their logs.
    client.force_login(team_admin)
    url = f"/catalog/sandboxes/{ecommerce.pk}/secrets/"
    for value in ("x" * (32 * 1024 + 1), "é" * (16 * 1024 + 1)):  # bytes, not characters
        response = client.post(url, {"name": "MAIL_API_TOKEN", "value": value}, follow=True)
        assert "a secret holds at most 32,768" in response.content.decode()
        assert not SecretValue.objects.exists()
    client.post(url, {"name": "MAIL_API_TOKEN", "value": "x" * (32 * 1024)})
    assert sandbox_secret_values(ecommerce) == {"MAIL_API_TOKEN": "x" * (32 * 1024)}


def test_a_sandboxs_secrets_together_are_bounded(ecommerce, user) -> None:
    from django.core.exceptions import ValidationError

    from jazzmine_web.catalog.crypto import encrypt

    def stored(name: str) -> None:  # as a value stored before the limit was
        SecretValue.objects.create(sandbox=ecommerce, name=name, ciphertext=encrypt("y" * 32768))

    for i in range(7):
        stored(f"OLD_{i}")
    secret_value_set(sandbox=ecommerce, name="MAIL_API_TOKEN", value="x" * 32768, user=user)
    # Replacing a value counts it once: 8 x 32 KiB is the limit itself.
    secret_value_set(sandbox=ecommerce, name="MAIL_API_TOKEN", value="z" * 32768, user=user)
    stored("OLD_7")
    with pytest.raises(ValidationError, match="would hold 294,912 bytes together"):
        secret_value_set(sandbox=ecommerce, name="MAIL_API_TOKEN", value="w" * 32768, user=user)
    assert sandbox_secret_values(ecommerce)["MAIL_API_TOKEN"] == "z" * 32768


def test_a_value_nothing_declares_any_more_is_listed_and_cleared(
    client, team_admin, ecommerce, user
) -> None:
    # Its tool's secrets field emptied, the value stayed, out of every list, and went to the
    # next tool that declared the name: nobody set it for that one.
    from jazzmine_web.catalog.services import tool_update

    secret_value_set(sandbox=ecommerce, name="MAIL_API_TOKEN", value="old-value", user=user)
    tool_update(tool=ecommerce.tools.get(name="send_receipt"), secrets=[], actor=team_admin)
    client.force_login(team_admin)
    page = client.get(f"/catalog/sandboxes/{ecommerce.pk}/").content.decode()
    row = page[page.index('id="secret-MAIL_API_TOKEN"') :]
    row = row[: row.index("</tr>")]
    assert "data-undeclared" in row and 'name="clear"' in row and 'name="value"' not in row
    url = f"/catalog/sandboxes/{ecommerce.pk}/secrets/"
    refused = client.post(url, {"name": "MAIL_API_TOKEN", "value": "new"}, HTTP_HX_REQUEST="true")
    assert refused.status_code == 422
    assert sandbox_secret_values(ecommerce) == {"MAIL_API_TOKEN": "old-value"}
    client.post(url, {"name": "MAIL_API_TOKEN", "value": "", "clear": "1"})
    assert not SecretValue.objects.exists()
    assert (
        "secret-MAIL_API_TOKEN"
        not in client.get(f"/catalog/sandboxes/{ecommerce.pk}/").content.decode()
    )
