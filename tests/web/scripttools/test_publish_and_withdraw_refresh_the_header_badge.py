"""Publish and Withdraw bring the tool page's header badge along, and Withdraw reads plainly.

The header's "not published" is outside the region a Publish or Withdraw (htmx) swaps: after
Publish the header still said "not published" until a reload, after Withdraw it said nothing.
And the withdrawn region read "Not offered to LLMs. A trial run of the current code passed."
"""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from .conftest import trial_recorded

pytestmark = pytest.mark.django_db

BADGE = re.compile(r'<span id="tool-published"(?: hx-swap-oob="true")?>.*?</span>(?:</span>)?')


def header_after(page: str, answer: str) -> str:
    """Return the page's header badge once htmx swapped in the answer's, as htmx does it: the
    element of the answer marked hx-swap-oob replaces the page's of the same id."""
    assert len(re.findall(r'id="tool-published"', page)) == 1  # the target is there, once
    swapped = re.findall(r'<span id="tool-published" hx-swap-oob="true">.*?</span>(?:</span>)?', answer)  # fmt: skip
    assert len(swapped) == 1, "the answer carries the header badge out of band"
    return swapped[0].replace(' hx-swap-oob="true"', "")


def test_publish_and_withdraw_keep_the_header_badge_true(client, member, rsi_row) -> None:
    client.force_login(member)
    trial_recorded(rsi_row)
    page_url = reverse("catalog:tool", args=[rsi_row.pk])
    url = reverse("scripttools:publish", args=[rsi_row.pk])
    page = client.get(page_url).content.decode()
    assert "not published</span></span>" in BADGE.search(page)[0]

    published = client.post(url, {"published": "1"}, HTTP_HX_REQUEST="true").content.decode()
    assert header_after(page, published) == '<span id="tool-published"></span>'
    page = client.get(page_url).content.decode()
    assert BADGE.search(page)[0] == '<span id="tool-published"></span>'  # as a reload shows

    withdrawn = client.post(url, {"published": "0"}, HTTP_HX_REQUEST="true").content.decode()
    assert "not published" in header_after(page, withdrawn)
    assert (
        "Withdrawn: not offered to LLMs. A trial of the current code passed, so it can be "
        "published again." in withdrawn
    )


def test_an_unpublished_tool_says_what_it_waits_for(client, member, rsi_row) -> None:
    client.force_login(member)
    page_url = reverse("catalog:tool", args=[rsi_row.pk])
    page = client.get(page_url).content.decode()
    assert "Not offered to LLMs. Run a trial of the current code and make it pass first." in page
    trial_recorded(rsi_row)
    page = client.get(page_url).content.decode()
    assert (
        "Not offered to LLMs. A trial of the current code passed, so it can be published." in page
    )
    assert "Withdrawn" not in page  # nothing stored says it ever was published
