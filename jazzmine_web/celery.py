"""The Celery application: the workers that execute runs, builds, trials and deliveries.

Start one (or more per Docker host, each with its own DOCKER_HOST) with
`celery -A jazzmine_web worker`, and one scheduler with `celery -A jazzmine_web beat`.
"""

from __future__ import annotations

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "jazzmine_web.settings")

app = Celery("jazzmine_web")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
