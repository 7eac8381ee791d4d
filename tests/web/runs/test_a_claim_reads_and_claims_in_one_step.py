"""A worker claims a run in one step with the reads its start needs (on its task's thread).

The claim stores RUNNING at once when the run's image is known to exist, else PREPARING with
the image left to make; a second delivery of the task, or a cancelled run, gets nothing, and
secrets are read only for the worker that won.
"""

from __future__ import annotations

import pytest

from jazzmine_web.catalog.services import sandbox_builder, secret_value_set
from jazzmine_web.runs import preparation
from jazzmine_web.runs.lifecycle import run_cancel_request
from jazzmine_web.runs.models import Run, RunStatus
from jazzmine_web.runs.services import run_create

pytestmark = pytest.mark.django_db


def queued(sandbox, member) -> Run:
    return run_create(sandbox=sandbox, user=member, body="emit_result(1)\n", start=False)


def image_of(sandbox) -> str:
    return sandbox_builder(sandbox).image_tag(sandbox.name)


def test_a_known_image_makes_the_claim_store_running(ecommerce, member):
    run = queued(ecommerce, member)
    tag = image_of(ecommerce)
    prepared = preparation.run_claim_prepare(
        run_id=run.pk, worker="w1@host", known_images=frozenset({tag})
    )
    assert prepared is not None and prepared.running and prepared.image_known
    run.refresh_from_db()
    assert run.status == RunStatus.RUNNING and run.worker == "w1@host"
    assert run.image == tag and run.backend == "docker"
    assert run.started_at == run.claimed_at is not None and run.heartbeat_at is not None


def test_an_unknown_image_leaves_the_run_preparing_with_the_image_to_make(ecommerce, member):
    run = queued(ecommerce, member)
    prepared = preparation.run_claim_prepare(
        run_id=run.pk, worker="w1@host", known_images=frozenset()
    )
    assert prepared is not None and not prepared.running
    assert not prepared.image_known and prepared.image_source is not None
    assert prepared.image == image_of(ecommerce)
    run.refresh_from_db()
    assert run.status == RunStatus.PREPARING and run.started_at is None and run.image == ""


def test_a_second_delivery_gets_nothing_and_reads_no_secret(ecommerce, member, monkeypatch):
    secret_value_set(sandbox=ecommerce, name="MAIL_API_TOKEN", value="s3cret", user=None)
    run = queued(ecommerce, member)
    known = frozenset({image_of(ecommerce)})
    first = preparation.run_claim_prepare(run_id=run.pk, worker="w1@host", known_images=known)
    assert first is not None and first.request.secrets == {"MAIL_API_TOKEN": "s3cret"}
    read: list[object] = []
    real = preparation.sandbox_secret_values
    monkeypatch.setattr(
        preparation, "sandbox_secret_values", lambda *a, **k: read.append(a) or real(*a, **k)
    )
    assert (
        preparation.run_claim_prepare(run_id=run.pk, worker="w2@host", known_images=known) is None
    )
    assert read == []
    assert Run.objects.get(pk=run.pk).worker == "w1@host"


def test_a_cancelled_run_is_never_claimed(ecommerce, member):
    run = queued(ecommerce, member)
    assert run_cancel_request(run_id=run.pk, reason="cancelled by member") == "queued"
    assert (
        preparation.run_claim_prepare(run_id=run.pk, worker="w1@host", known_images=frozenset())
        is None
    )
    run.refresh_from_db()
    assert run.status == RunStatus.FAILED and run.worker == ""
