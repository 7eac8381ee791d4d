"""Every page carries a Content-Security-Policy that runs only this server's script files.

If markup ever got past the templates' escaping onto a page a reviewer opens, the browser
must still run none of it: no inline script or handler, no eval (htmx's included), nothing
from another origin, no framing, no form posting elsewhere, no <base> moving relative URLs.
"""

from __future__ import annotations

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db


def policy(response) -> dict[str, list[str]]:
    """Return the response's Content-Security-Policy as directive -> sources."""
    header = response.headers.get("Content-Security-Policy")
    assert header, f"no Content-Security-Policy on {response.request['PATH_INFO']}"
    directives: dict[str, list[str]] = {}
    for part in header.split(";"):
        name, *sources = part.split()
        directives[name] = sources
    return directives


def assert_strict(response) -> None:
    csp = policy(response)
    assert csp["default-src"] == ["'self'"]
    assert csp["script-src"] == ["'self'"]  # no 'unsafe-inline', 'unsafe-eval', other hosts
    assert csp["style-src"] == ["'self'"]
    assert csp["connect-src"] == ["'self'"]  # the page's own websockets only
    assert csp["object-src"] == ["'none'"]
    assert csp["base-uri"] == ["'none'"]
    assert csp["form-action"] == ["'self'"]
    assert csp["frame-ancestors"] == ["'none'"]
    assert "'unsafe-inline'" not in response.headers["Content-Security-Policy"]
    assert "'unsafe-eval'" not in response.headers["Content-Security-Policy"]
    assert response.headers["X-Frame-Options"] == "DENY"
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    assert response.headers["Referrer-Policy"] == "same-origin"
    assert response.headers["Cross-Origin-Opener-Policy"] == "same-origin"


def test_the_login_page_has_the_policy_and_headers(client: Client) -> None:
    response = client.get("/login/")
    assert response.status_code == 200
    assert_strict(response)


def test_the_pages_a_reviewer_opens_have_them(ecommerce, member, logged_in) -> None:
    for url in ["/", "/catalog/", "/reviews/", "/reviews/audit/", "/runs/", "/playground/"]:
        response = logged_in.get(url)
        assert response.status_code == 200, url
        assert_strict(response)


def test_htmx_partials_and_refused_forms_have_them(ecommerce, member, logged_in) -> None:
    partial = logged_in.get(
        "/catalog/?q=x", headers={"HX-Request": "true", "HX-Target": "catalog-results"}
    )
    assert partial.status_code == 200
    assert_strict(partial)
    refused = logged_in.post("/catalog/sandboxes/new/", {"name": "Not a name!"})
    assert refused.status_code == 422  # the form again, errors in place
    assert_strict(refused)


def test_a_plain_text_answer_is_never_sniffed_as_html(ecommerce, member, logged_in) -> None:
    # This sandbox has no script tools: its export answers in words, as text/plain.
    response = logged_in.get(f"/catalog/sandboxes/{ecommerce.pk}/script-tools.zip")
    assert response.status_code == 404
    assert response.headers["Content-Type"].startswith("text/plain")
    assert response.headers["X-Content-Type-Options"] == "nosniff"
