"""Removing a webhook answers 204 with no content type: the API's answers are JSON or nothing.

It answered 204 with `Content-Type: text/html`, Django's default for a response, though a 204
has no body and the README says every answer of the API is JSON.
"""

from __future__ import annotations

import pytest

import jazzmine.net as net

pytestmark = pytest.mark.django_db


def test_delete_answers_204_with_no_content_type(api, monkeypatch) -> None:
    monkeypatch.setattr(net, "resolve", lambda host, port: ["93.184.216.34"])  # a public host
    hook = {"url": "https://agent.example/hook"}
    assert api.put("/api/v1/webhook/", hook, content_type="application/json").status_code == 200
    removed = api.delete("/api/v1/webhook/")
    assert removed.status_code == 204 and removed.content == b""
    assert "Content-Type" not in removed.headers
    assert api.get("/api/v1/webhook/").json()["url"] is None
