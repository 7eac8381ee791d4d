"""An htmx request whose session has ended sends the whole tab to the login page.

Logged out in another tab, pressing Create token (or Reject on a review page) swapped the
whole login page into the panel, under a top bar still naming the person, and what they had
typed was gone. The answer to such a request is `HX-Redirect` to the login page, which
brings them back to the page they were on; a request that is not htmx's is redirected as
before.
"""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db


def htmx_post(client: Client, url: str, page: str):
    headers = {"HX-Request": "true", "HX-Current-URL": page}
    return client.post(url, {"name": "ci"}, headers=headers)


def next_of(location: str) -> str:
    return parse_qs(urlsplit(location).query)["next"][0]


def test_an_htmx_press_after_logout_sends_the_tab_to_login(member) -> None:
    client = Client()
    client.force_login(member)
    assert client.get("/account/tokens/").status_code == 200
    client.logout()
    for _ in range(2):
        response = htmx_post(client, "/account/tokens/", "http://testserver/account/tokens/?x=1")
        assert response.status_code == 200 and response.content == b""
        login = response["HX-Redirect"]
        assert login.startswith("/login/?") and next_of(login) == "/account/tokens/?x=1"


def test_a_plain_request_is_redirected_as_before(member) -> None:
    response = Client().post("/account/tokens/", {"name": "ci"})
    assert response.status_code == 302 and response["Location"].startswith("/login/?next=")
    assert "HX-Redirect" not in response


@pytest.mark.parametrize(
    "page", ["http://evil.example/account/", "http://testserver//evil.example/", "javascript:x", ""]
)
def test_the_way_back_is_a_page_of_this_site(page: str) -> None:
    response = htmx_post(Client(), "/account/tokens/", page)
    assert next_of(response["HX-Redirect"]) == "/"
