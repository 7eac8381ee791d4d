"""Give this test session its own Redis namespace (loaded with `-p`, before Django's settings).

The broker queues and channel groups of a test session must never meet those of a running
deployment (or of another test session) on the same Redis: a test worker would take their runs.
"""

from __future__ import annotations

import os

os.environ.setdefault("JAZZMINE_REDIS_PREFIX", f"jazzmine-test-{os.getpid()}")
