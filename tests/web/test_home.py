from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest
from django.core.management import call_command

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("embedded_demo")]


def test_it_sends_anonymous_visitors_to_the_login_page(client) -> None:
    response = client.get("/")
    assert response.status_code == 302
    assert response["Location"].startswith("/login/")


def test_it_lists_the_demo_sandbox_and_its_tools(client) -> None:
    call_command("seed_demo")
    assert client.login(username="demo", password="jazzmine-demo")
    response = client.get("/")
    assert response.status_code == 200
    html = response.content.decode()
    assert 'id="sandbox-ecommerce"' in html
    for name in (
        "get_orders",
        "get_user",
        "search_products",
        "update_order_status",
        "send_receipt",
    ):
        assert f"<code>{name}</code>" in html
    assert 'class="highlight"' in html
    assert "MAIL_API_TOKEN" in html
    assert 'href="/catalog/sandboxes/' in html


def test_it_shows_only_the_users_teams_sandboxes(logged_in) -> None:
    call_command("seed_demo")
    html = logged_in.get("/").content.decode()
    assert 'id="sandbox-ecommerce"' not in html
    assert "You are in no team yet" in html


def test_the_demo_tools_prompt_is_well_formed_xml() -> None:
    from jazzmine_web.catalog.selectors import demo_registry

    root = ET.fromstring(demo_registry().build_tools_prompt("ecommerce"))
    assert len(root.findall("tool")) == 5


def test_the_pygments_stylesheet_is_public(client) -> None:
    response = client.get("/pygments.css")
    assert response.status_code == 200
    assert ".highlight" in response.content.decode()


def test_the_icon_browsers_ask_for_on_their_own_is_the_studios(client) -> None:
    # Asked by pages that name none (the admin's, an API answer opened in a tab), logged in
    # or not; a 404 would be a console error on each.
    response = client.get("/favicon.ico")
    assert response.status_code == 301
    assert response["Location"] == "/static/studio/favicon.svg"


def test_it_says_where_to_start(client) -> None:
    # A newcomer saw a list of sandboxes and nothing saying what to do first.
    call_command("seed_demo")
    assert client.login(username="demo", password="jazzmine-demo")
    html = client.get("/").content.decode()
    start = html[html.index('id="start-here"') :]
    for path in ("/playground/", "/reviews/", "/account/tokens/"):
        assert f'href="{path}"' in start[: start.index("</section>")]
