"""A run waiting for a free worker says how many runs are ahead of it; one waiting with no
worker to take it, or whose worker went silent, says so; a run someone stopped reads
"Cancelled", not as a failure."""

from __future__ import annotations

import datetime

import pytest
from django.utils import timezone

from jazzmine_web.runs.models import Run
from jazzmine_web.runs.services import run_create
from jazzmine_web.workers.models import Worker

pytestmark = pytest.mark.django_db


def test_a_queued_run_page_tells_how_many_runs_wait_before_it(client, ecommerce, member):
    runs = [
        run_create(sandbox=ecommerce, user=member, body="emit_result(1)\n", start=False)
        for _ in range(3)
    ]
    client.force_login(member)
    assert notice(page(client, runs[0])) == (
        "Queued: no run is ahead of it; it starts when a worker is free."  # it goes next
    )
    assert notice(page(client, runs[2])) == (
        "Queued: 2 runs are ahead of it, each waiting for a free worker."
    )
    Run.objects.filter(pk=runs[0].pk).update(status="running")
    # What an open page asks for again, every few seconds: its place now, then nothing.
    wait = f"/runs/{runs[2].pk}/wait/"
    assert notice(client.get(wait).content.decode()) == (
        "Queued: 1 run is ahead of it; it starts once that one has a worker."
    )
    Run.objects.filter(pk__in=[r.pk for r in runs[1:]]).update(status="running")
    assert notice(client.get(wait).content.decode()) == ""


def test_a_queued_run_with_no_worker_says_that_rather_than_its_place(
    client, ecommerce, member
) -> None:
    # Both were said at once: "no run is ahead of it; it starts when a worker is free"
    # above "No worker of this deployment has been running...".
    Worker.objects.all().delete()
    run = run_create(sandbox=ecommerce, user=member, body="emit_result(1)\n", start=False)
    Run.objects.filter(pk=run.pk).update(created_at=ago(75), enqueued_at=ago(75))
    client.force_login(member)
    html = page(client, run)
    assert notice(html).startswith("No worker of this deployment has been running for the 75 s")
    assert "Queued: " not in html


def ago(seconds: float) -> datetime.datetime:
    return timezone.now() - datetime.timedelta(seconds=seconds)


def worker_row(name: str, queue: str, *, beat: float = 0.0) -> Worker:
    return Worker.objects.create(
        name=name, boot="b", queue=queue, started_at=ago(60), heartbeat_at=ago(beat)
    )


def page(client, run) -> str:
    return client.get(f"/runs/{run.pk}/").content.decode()


def notice(html: str) -> str:
    """Return the wait notice a page shows ("" when its element is hidden: nothing to say)."""
    element = html[html.index("data-wait-notice") :]
    head, _, rest = element.partition(">")
    return "" if " hidden" in head else rest[: rest.index("</p>")]


def test_a_run_queued_with_no_worker_of_its_deployment_says_why(
    client, ecommerce, member, settings
) -> None:
    Worker.objects.all().delete()  # the session's own worker, if one registered here
    run = run_create(sandbox=ecommerce, user=member, body="emit_result(1)\n", start=False)
    client.force_login(member)
    assert notice(page(client, run)).startswith("Queued: ")  # just queued: its place
    Run.objects.filter(pk=run.pk).update(created_at=ago(75), enqueued_at=ago(75))
    assert "No worker of this deployment has been running for the 75 s" in page(client, run)
    # A worker sharing the database, but started with another deployment's Redis prefix.
    worker_row("worker@elsewhere", "jazzmine-a11e6e0fd2")
    html = page(client, run)
    assert "worker@elsewhere (prefix &#x27;jazzmine-a11e6e0fd2&#x27;)" in html
    assert "JAZZMINE_DEPLOYMENT and JAZZMINE_REDIS_PREFIX" in html
    # One of this deployment's, alive: the run just waits its turn.
    worker_row("worker@here", settings.JAZZMINE_REDIS_PREFIX)
    assert notice(page(client, run)).startswith("Queued: ")
    # ... unless its heartbeat stopped long ago (killed): none is alive then.
    Worker.objects.filter(name="worker@here").update(heartbeat_at=ago(300))
    assert notice(page(client, run)).startswith("No worker of this deployment")


def test_a_running_run_whose_worker_went_silent_says_since_when(
    client, ecommerce, member, settings
) -> None:
    run = run_create(sandbox=ecommerce, user=member, body="emit_result(1)\n", start=False)
    Run.objects.filter(pk=run.pk).update(status="running", worker="w1@a", heartbeat_at=ago(1))
    client.force_login(member)
    assert notice(page(client, run)) == ""
    Run.objects.filter(pk=run.pk).update(heartbeat_at=ago(17))
    limit, every = int(settings.JAZZMINE_HEARTBEAT_TIMEOUT_SECONDS), settings.JAZZMINE_REAP_SECONDS
    assert notice(page(client, run)) == (
        "Its worker w1@a was last heard from 17 s ago: if it stays silent, the reaper ends the "
        f"run as lost at its first pass (every {every:g} s) after that reaches {limit} s."
    )
    # Past the limit, it no longer says "once that reaches 30 s" of a silence of 35 s.
    Run.objects.filter(pk=run.pk).update(heartbeat_at=ago(limit + 5))
    assert notice(page(client, run)) == (
        f"Its worker w1@a was last heard from {limit + 5} s ago: the reaper ends the run as "
        f"lost at its next pass (every {every:g} s)."
    )


def test_a_cancelled_run_reads_cancelled_in_its_page_and_the_list(client, ecommerce, member):
    run = run_create(sandbox=ecommerce, user=member, body="emit_result(1)\n", start=False)
    Run.objects.filter(pk=run.pk).update(status="failed", outcome="cancelled", message="by ada")
    client.force_login(member)
    html = page(client, run)
    assert 'class="badge status-cancelled" data-run-status data-status="failed">Cancelled<' in html
    listing = client.get("/runs/").content.decode()
    assert '<span class="badge status-cancelled">Cancelled</span>' in listing


def test_a_live_pane_asks_for_its_notice_and_an_ended_one_stops(client, ecommerce, member):
    # Said on a page's load only before: a pane open while no worker ran said "Queued" and
    # nothing else for as long as it stayed open.
    Worker.objects.all().delete()
    run = run_create(sandbox=ecommerce, user=member, body="emit_result(1)\n", start=False)
    client.force_login(member)
    assert f'hx-get="/runs/{run.pk}/wait/" hx-trigger="every 5s"' in page(client, run)
    Run.objects.filter(pk=run.pk).update(created_at=ago(75), enqueued_at=ago(75))
    asked = client.get(f"/runs/{run.pk}/wait/").content.decode()
    assert "No worker of this deployment has been running for the 75 s" in notice(asked)
    assert "hx-trigger" in asked  # and asks again
    Run.objects.filter(pk=run.pk).update(status="succeeded")
    ended = client.get(f"/runs/{run.pk}/wait/").content.decode()
    assert notice(ended) == "" and "hx-trigger" not in ended


def test_another_persons_run_has_no_notice_to_ask_for(client, ecommerce, member, outsider):
    run = run_create(sandbox=ecommerce, user=member, body="emit_result(1)\n", start=False)
    client.force_login(outsider)
    assert client.get(f"/runs/{run.pk}/wait/").status_code == 404
