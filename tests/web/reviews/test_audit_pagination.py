"""The audit trail pages through every entry, keeps its filters in the links and tells the total."""

from __future__ import annotations

import re

import pytest

from jazzmine_web.reviews.models import AuditAction, AuditEntry

pytestmark = pytest.mark.django_db

ROWS = '<tr class="audit-'


@pytest.fixture
def many(ecommerce):
    """Record 650 rejections (beyond the 500 rows the page used to stop at) and 30 approvals."""
    before = AuditEntry.objects.filter(sandbox=ecommerce).count()
    AuditEntry.objects.bulk_create(
        [
            AuditEntry(
                sandbox=ecommerce,
                action=AuditAction.REJECTED if n < 650 else AuditAction.APPROVED,
                actor_label="grace",
                note=f"entry-{n:04d}",
            )
            for n in range(680)
        ]
    )
    return before + 680


def test_every_entry_is_reachable_page_by_page(many, reviewer_client) -> None:
    seen: set[str] = set()
    page = 1
    while True:
        html = reviewer_client.get(f"/reviews/audit/?page={page}").content.decode()
        seen.update(re.findall(r"entry-\d{4}", html))
        assert html.count(ROWS) <= 100
        if 'rel="next"' not in html:
            break
        page += 1
    assert len(seen) == 680
    assert page == -(-many // 100)
    assert f"of {many}" in html and f"Page {page} of {page}" in html


def test_it_tells_the_total(many, reviewer_client) -> None:
    html = reviewer_client.get("/reviews/audit/").content.decode()
    assert html.count(ROWS) == 100
    assert f'data-audit-total="{many}"' in html and f"Entries 1–100 of {many}" in html


def test_the_page_links_keep_the_filters(many, reviewer_client) -> None:
    html = reviewer_client.get("/reviews/audit/?decision=rejected&sandbox=&page=2").content.decode()
    assert "Entries 101–200 of 650 matching the filters" in html
    assert 'href="?decision=rejected&amp;page=3"' in html
    assert 'href="?decision=rejected&amp;page=1"' in html
    # The CSV export keeps the filters but not the page.
    assert "?decision=rejected&amp;format=csv" in html


def test_the_last_page_holds_the_rest(many, reviewer_client) -> None:
    html = reviewer_client.get("/reviews/audit/?decision=rejected&page=7").content.decode()
    assert html.count(ROWS) == 50 and "Entries 601–650 of 650" in html
    assert 'rel="next"' not in html


def test_a_page_out_of_range_shows_the_last(many, reviewer_client) -> None:
    html = reviewer_client.get("/reviews/audit/?decision=approved&page=99").content.decode()
    assert html.count(ROWS) == 30


def test_htmx_gets_the_table_and_its_pager(many, reviewer_client) -> None:
    response = reviewer_client.get(
        "/reviews/audit/?page=2", headers={"HX-Request": "true", "HX-Target": "audit-table"}
    )
    html = response.content.decode()
    assert html.lstrip().startswith('<div id="audit-table"')
    assert html.count(ROWS) == 100 and 'rel="prev"' in html and "<h1>" not in html


def test_the_csv_still_exports_every_row_as_json_data(many, reviewer_client) -> None:
    response = reviewer_client.get("/reviews/audit/?format=csv&decision=rejected")
    lines = response.content.decode().strip().splitlines()
    assert len(lines) == 651
    assert lines[1].endswith(",{}")
