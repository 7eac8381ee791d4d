"""A run is committed, and handed to a worker, together with its audit entry or not at all."""

from __future__ import annotations

import pytest

from jazzmine_web.reviews.models import AuditEntry
from jazzmine_web.runs.models import Run
from jazzmine_web.runs.services import run_create
from jazzmine_web.runs.signals import run_created

pytestmark = pytest.mark.django_db


def test_a_run_whose_audit_fails_is_neither_stored_nor_queued(
    ecommerce, member, django_capture_on_commit_callbacks
):
    def audit_down(**_kwargs):
        raise RuntimeError("the audit trail could not be written")

    audits = AuditEntry.objects.count()
    run_created.connect(audit_down, dispatch_uid="audit-down")
    try:
        with (
            django_capture_on_commit_callbacks(execute=False) as queued,
            pytest.raises(RuntimeError, match="audit trail"),
        ):
            run_create(sandbox=ecommerce, user=member, body="emit_result(1)\n")
    finally:
        run_created.disconnect(dispatch_uid="audit-down")
    assert not Run.objects.exists()
    assert AuditEntry.objects.count() == audits  # the other receiver's entry went with it
    assert queued == []  # no worker is ever told about it


def test_a_run_is_queued_once_its_row_and_audit_are_stored(
    ecommerce, member, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=False) as queued:
        run = run_create(sandbox=ecommerce, user=member, body="emit_result(1)\n")
    assert len(queued) == 1
    entry = AuditEntry.objects.get(action="run_created")
    assert entry.data["run_id"] == str(run.pk) and entry.code_sha256 == run.code_sha256
