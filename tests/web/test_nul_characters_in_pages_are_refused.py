"""A NUL character (\\u0000) in a page's path, query or form field is refused (400) with a
sentence naming the field, before any view reads it: pages read filters and a few fields
without a Django form (whose fields refuse NUL themselves), and PostgreSQL can neither store
nor look up text with a NUL (there each was a 500). The answer is the same on SQLite."""

from __future__ import annotations

import pytest
from django.test import Client

from jazzmine_web.teams.models import ApiToken

pytestmark = pytest.mark.django_db


@pytest.fixture
def browser(member) -> Client:
    client = Client(raise_request_exception=False)
    client.force_login(member)
    return client


def _refused(response, field: str) -> bool:
    assert response.status_code == 400, (response.status_code, response.content[:300])
    assert f"'{field}' contains a NUL character" in response.content.decode()
    return True


@pytest.mark.parametrize(
    ("path", "field"),
    [
        ("/catalog/?q=tot%00al", "q"),
        ("/catalog/?tag=%00", "tag"),
        ("/runs/?status=%00", "status"),
        ("/reviews/audit/?decision=%00", "decision"),
        ("/playground/?task=Orders%00", "task"),
        ("/catalog/?q%00=1", "q\\u0000"),
    ],
)
def test_a_nul_in_a_query_is_refused(browser, ecommerce, path, field) -> None:
    assert browser.get(path.replace("%00", "")).status_code == 200  # the page, without it
    assert _refused(browser.get(path), field)


def test_a_nul_in_a_form_field_read_without_a_form_is_refused(browser) -> None:
    assert _refused(browser.post("/account/tokens/", {"name": "ci\x00bot"}), "name")
    assert not ApiToken.objects.exists()


def test_a_nul_in_a_webhook_url_on_its_page_is_refused(browser, member) -> None:
    response = browser.post("/reviews/webhooks/", {"token": "1", "url": "https://e.com/\x00"})
    assert _refused(response, "url")


def test_a_nul_in_a_path_is_refused(browser) -> None:
    assert _refused(browser.get("/catalog/%00/"), "the path")
