"""HEAD is answered wherever GET is, with the same headers and no body."""

from __future__ import annotations

import pytest

from .conftest import submit

pytestmark = pytest.mark.django_db


def test_head_is_answered_wherever_get_is_with_the_same_headers(api, gated) -> None:
    # HTTP asks HEAD of every GET (RFC 9110 9.3.2): monitors and proxies send it. The long
    # requests (wait, events) stay GET alone: a HEAD would hold one open for headers.
    state = submit(api, gated).json()
    for url in ("/api/v1/sandboxes/", f"/api/v1/sandboxes/{gated.pk}/tools/",
                f"/api/v1/sandboxes/{gated.pk}/prompt/", f"/api/v1/submissions/{state['id']}/"):  # fmt: skip
        got, head = api.get(url), api.head(url)
        assert (got.status_code, head.status_code) == (200, 200), url
        assert head["Content-Type"] == got["Content-Type"]
    assert api.head(f"/api/v1/submissions/{state['id']}/events/").status_code == 405
