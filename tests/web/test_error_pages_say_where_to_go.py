"""Pages that are not found, not allowed or failed keep the studio around them and say why.

Django's own pages were a bare "Not Found" or "403 Forbidden" without the navigation: a
newcomer following a deleted tool's link, or pressing what their role may not do, was left
with no way back and no reason.
"""

from __future__ import annotations

import pytest
from django.test import RequestFactory
from django.views.defaults import server_error

pytestmark = pytest.mark.django_db


def test_a_missing_page_keeps_the_navigation_and_links_home(logged_in) -> None:
    response = logged_in.get("/catalog/tools/999999/")
    html = response.content.decode()
    assert response.status_code == 404
    assert 'id="not-found"' in html and "<code>/catalog/tools/999999/</code>" in html
    assert 'href="/account/tokens/"' in html  # the navigation
    assert 'href="/">Your sandboxes</a>' in html


def test_a_missing_page_asks_a_visitor_to_log_in(client) -> None:
    html = client.get("/no-such-page/").content.decode()
    assert 'id="not-found"' in html and 'href="/login/">Log in</a>' in html


def test_what_a_role_may_not_do_says_why(client, member, ecommerce) -> None:
    client.force_login(member)
    tool = ecommerce.tools.get(name="get_orders")
    response = client.post(f"/catalog/tools/{tool.pk}/accept/")
    html = response.content.decode()
    assert response.status_code == 403
    assert 'id="forbidden"' in html and "Only team admins accept a tool&#x27;s code." in html
    assert 'href="/account/tokens/"' in html


def test_a_server_error_links_home_without_needing_a_database() -> None:
    response = server_error(RequestFactory().get("/"))
    html = response.content.decode()
    assert response.status_code == 500
    assert 'id="server-error"' in html and 'href="/">your sandboxes</a>' in html


@pytest.mark.parametrize("host", ["192.0.2.2:8101", "studio.example.com", "<b>x</b>.example"])
def test_a_name_the_server_does_not_answer_to_is_named_with_what_to_set(client, host) -> None:
    # An operator reaching a new web process by its address got "send the form again".
    response = client.get("/login/", HTTP_HOST=host)
    assert response.status_code == 400
    html = response.content.decode()
    assert "data-refused-host" in html and "JAZZMINE_ALLOWED_HOSTS" in html
    assert "<b>x</b>" not in html  # the header is shown as text
    assert "send the form again" not in html.lower()


def test_a_body_it_cannot_parse_still_says_to_send_the_form_again(client) -> None:
    response = client.post(
        "/login/", data=b"x", content_type="multipart/form-data", HTTP_HOST="127.0.0.1"
    )
    assert response.status_code == 400
    assert "Send the form again" in response.content.decode()
