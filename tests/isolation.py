"""Give this test session its own Redis namespace and deployment name (loaded with `-p`,
before Django's settings).

The broker queues and channel groups of a test session must never meet those of a running
deployment (or of another test session) on the same Redis: a test worker would take their runs.
Nor may its sandbox images and containers meet another session's on the same Docker engine:
two sessions of one checkout share its secret key, from which a deployment's name is derived
otherwise, and one's builds pruned the other's current images (a run or trial then failed
with "image ... is not built"), one's worker start removed the other's containers.
"""

from __future__ import annotations

import os

os.environ.setdefault("JAZZMINE_REDIS_PREFIX", f"jazzmine-test-{os.getpid()}")
os.environ.setdefault("JAZZMINE_DEPLOYMENT", f"test-{os.getpid()}")
