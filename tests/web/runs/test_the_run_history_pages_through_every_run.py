"""`/runs/` pages through every run, tells the total, and keeps the filters in its page links."""

from __future__ import annotations

import re
import uuid

import pytest

from jazzmine_web.runs.models import Run, RunStatus
from jazzmine_web.runs.services import run_create
from jazzmine_web.runs.views import RUNS_PER_PAGE

pytestmark = pytest.mark.django_db


@pytest.fixture
def many_runs(ecommerce, member) -> list[Run]:
    """130 runs: 120 failed and 10 succeeded (more than the old silent cap of 100)."""
    first = run_create(sandbox=ecommerce, user=member, body="emit_result(1)\n", start=False)
    runs = [first]
    for i in range(1, 130):
        status = RunStatus.SUCCEEDED if i <= 10 else RunStatus.FAILED
        runs.append(
            Run(
                id=uuid.uuid4(), sandbox=ecommerce, created_by=member, body=first.body,
                script=first.script, code_sha256=first.code_sha256, status=status,
            )
        )  # fmt: skip
    Run.objects.bulk_create(runs[1:])
    Run.objects.filter(pk=first.pk).update(status=RunStatus.FAILED)
    return runs


def shown(html: str) -> set[str]:
    return set(re.findall(r'<a href="/runs/[0-9a-f-]+/">([0-9a-f]{8})</a>', html))


def test_every_run_is_reachable_page_by_page_and_the_total_is_told(
    client, member, many_runs
) -> None:
    client.force_login(member)
    seen: set[str] = set()
    url = "/runs/"
    pages = 0
    while url:
        html = client.get(url).content.decode()
        pages += 1
        on_page = shown(html)
        assert len(on_page) <= RUNS_PER_PAGE and not on_page & seen  # no run twice
        seen |= on_page
        assert "of 130 runs" in html
        following = re.search(r'<a href="(\?[^"]*)" rel="next">', html)
        url = "/runs/" + following.group(1).replace("&amp;", "&") if following else ""
    assert pages == 3
    assert seen == {run.short_id for run in many_runs}


def test_page_links_keep_the_filters(client, member, many_runs) -> None:
    client.force_login(member)
    html = client.get("/runs/?status=failed&sandbox=ecommerce").content.decode()
    assert "1–50 of 120 runs matching the filters" in html
    assert '<a href="?sandbox=ecommerce&amp;status=failed&amp;page=2" rel="next">' in html
    last = client.get("/runs/?sandbox=ecommerce&status=failed&page=3").content.decode()
    assert "101–120 of 120 runs" in last and 'rel="next"' not in last
    assert len(shown(last)) == 20


def test_an_out_of_range_page_shows_the_last_one_and_an_empty_filter_says_so(
    client, member, many_runs
) -> None:
    client.force_login(member)
    assert "101–130 of 130 runs" in client.get("/runs/?page=99").content.decode()
    html = client.get("/runs/?status=cancelled").content.decode()
    assert "No runs match the filters" in html and 'class="pager"' not in html
