"""A trial's status reads in words on the tool page, not as the raw code (`valid_json`)."""

from __future__ import annotations

import pytest

from jazzmine.scripttools import TrialStatus
from jazzmine_web.scripttools.selectors import TRIAL_STATUS_LABELS

from .conftest import trial_recorded

pytestmark = pytest.mark.django_db


def test_every_status_of_the_result_table_has_a_label() -> None:
    assert set(TRIAL_STATUS_LABELS) == {s.value for s in TrialStatus}
    assert all("_" not in label for label in TRIAL_STATUS_LABELS.values())


def test_the_trial_result_and_earlier_trials_show_labels(client, member, rsi_row) -> None:
    client.force_login(member)
    trial_recorded(rsi_row, status="non_json", passed=False)
    trial = trial_recorded(rsi_row)
    html = client.get(f"/catalog/tools/{rsi_row.pk}/trials/{trial.pk}/").content.decode()
    # The code stays in the data attribute for scripts and tests; people read words.
    assert 'data-trial-status="valid_json"' in html
    assert ">passed: valid JSON</span>" in html and ">valid_json<" not in html

    page = client.get(f"/catalog/tools/{rsi_row.pk}/").content.decode()
    assert "<td>output is not JSON</td>" in page and "<td>non_json</td>" not in page


def test_a_trial_that_ended_without_timings_shows_none(client, member, rsi_row) -> None:
    # A trial ended by its worker's restart has no exit code and no duration: the page said
    # "exit code — · ms".
    client.force_login(member)
    trial = trial_recorded(rsi_row, status="sandbox_error", passed=False)
    assert trial.duration_ms is None and trial.exit_code is None
    html = client.get(f"/catalog/tools/{rsi_row.pk}/trials/{trial.pk}/").content.decode()
    assert (
        "<code data-exit-code>—</code>" in html
        and " ms" not in html.split("data-exit-code")[1][:80]
    )
