"""A wheel limit that is not a positive whole number stops the start, naming the setting.

The limits on what a sandbox's wheels unpack to are read at start, by the web app's settings
and by a builder outside Django alike: a typo must not pass as "no limit" (or as a limit of
zero that fails every build with a dependency) until the first build meets it.
"""

from __future__ import annotations

import pytest

from jazzmine.sandbox.builder import BuildPolicy
from tests.web.helpers import manage_check as check

NONSENSE = [
    ("JAZZMINE_MAX_WHEEL_BYTES", "0", "at least 1"),
    ("JAZZMINE_MAX_WHEEL_BYTES", "1GiB", "must be an integer"),
    ("JAZZMINE_MAX_WHEEL_ENTRIES", "-5", "at least 1"),
    ("JAZZMINE_MAX_SANDBOX_WHEELS_BYTES", "1e9", "must be an integer"),
    ("JAZZMINE_MAX_SANDBOX_WHEELS_ENTRIES", "0", "at least 1"),
]


@pytest.mark.parametrize(("setting", "value", "said"), NONSENSE)
def test_the_web_app_does_not_start(setting, value, said):
    result = check(**{setting: value})
    assert result.returncode != 0
    assert setting in result.stderr and said in result.stderr, result.stderr[-500:]


@pytest.mark.parametrize(("setting", "value", "_said"), NONSENSE)
def test_a_builder_outside_django_refuses_it_too(setting, value, _said, monkeypatch):
    monkeypatch.setenv(setting, value)
    with pytest.raises(ValueError, match=setting):
        BuildPolicy.from_env()


def test_whole_numbers_are_the_limits_everywhere(monkeypatch):
    values = {
        "JAZZMINE_MAX_WHEEL_BYTES": "1000",
        "JAZZMINE_MAX_WHEEL_ENTRIES": "20",
        "JAZZMINE_MAX_SANDBOX_WHEELS_BYTES": "3000",
        "JAZZMINE_MAX_SANDBOX_WHEELS_ENTRIES": "40",
    }
    assert check(**values).returncode == 0
    for setting, value in values.items():
        monkeypatch.setenv(setting, value)
    limits = BuildPolicy.from_env().wheel_limits
    assert (limits.wheel_bytes, limits.wheel_entries) == (1000, 20)
    assert (limits.sandbox_bytes, limits.sandbox_entries) == (3000, 40)
