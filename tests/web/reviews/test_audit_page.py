from __future__ import annotations

import csv
import io

import pytest

from jazzmine_web.reviews.models import AuditEntry, Submission
from jazzmine_web.reviews.services import submission_reject

from .conftest import submit

pytestmark = pytest.mark.django_db


@pytest.fixture
def history(api, ecommerce, reviewer):
    rejected = submit(api, ecommerce).json()
    submission_reject(
        submission=Submission.objects.get(pk=rejected["id"]),
        user=reviewer,
        feedback="=HYPERLINK(x)",
    )
    submit(api, ecommerce, body="import os\n")
    return rejected


def test_every_submission_and_decision_is_listed(history, reviewer_client) -> None:
    html = reviewer_client.get("/reviews/audit/").content.decode()
    for action in ("Submitted", "Rejected by the validator", "Rejected"):
        assert action in html
    assert "agent ci-bot (ada)" in html and "grace" in html


def test_the_audit_filters_by_decision_person_agent_and_sandbox(
    history, reviewer_client, reviewer, issued, ecommerce, empty_sandbox
) -> None:
    def rows(query: str) -> int:
        return (
            reviewer_client.get(f"/reviews/audit/?{query}")
            .content.decode()
            .count('<tr class="audit-')
        )

    assert rows("decision=rejected") == 1
    assert rows(f"person={reviewer.pk}") == 1
    assert rows(f"agent={issued.token.pk}") == 4  # everything about its two submissions
    # The sandbox's trail also holds its catalog history (the fixture created it and its tools).
    catalog = AuditEntry.objects.filter(sandbox=ecommerce, submission__isnull=True)
    assert catalog.filter(action__in=["sandbox_created", "tool_created"]).count() == catalog.count()
    assert rows(f"sandbox={ecommerce.pk}") == 4 + catalog.count()
    # Nothing about the submissions; only its own creation.
    assert rows(f"sandbox={empty_sandbox.pk}") == 1
    (created,) = AuditEntry.objects.filter(sandbox=empty_sandbox)
    assert created.action == "sandbox_created"


def test_the_audit_exports_csv_with_hashes_and_no_formulas(history, reviewer_client) -> None:
    response = reviewer_client.get("/reviews/audit/?format=csv&decision=rejected")
    assert response["Content-Type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    assert len(rows) == 1
    row = rows[0]
    assert row["action"] == "rejected" and row["person"] == "grace"
    assert len(row["code_sha256"]) == 64
    assert row["note"] == "'=HYPERLINK(x)"


def test_other_teams_audit_is_invisible(history, client, outsider) -> None:
    client.force_login(outsider)
    assert client.get("/reviews/audit/").content.decode().count('<tr class="audit-') == 0
