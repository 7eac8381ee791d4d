"""A worker process as the database knows it."""

from __future__ import annotations

from django.db import models


class Worker(models.Model):
    """A worker process: which Docker host it drives and when it last said it was alive."""

    name = models.CharField(max_length=200, unique=True)  # Celery's node name
    boot = models.CharField(max_length=32, help_text="Changes each time the process starts.")
    hostname = models.CharField(max_length=200, blank=True)
    pid = models.PositiveIntegerField(default=0)
    docker_host = models.CharField(max_length=300, blank=True)
    concurrency = models.PositiveIntegerField(default=1)
    # The Redis prefix its queue is under (`JAZZMINE_REDIS_PREFIX`): a worker sharing the
    # database but not the prefix takes none of the deployment's tasks, though it beats.
    queue = models.CharField(max_length=200, blank=True)
    started_at = models.DateTimeField()
    heartbeat_at = models.DateTimeField()
    stopped_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["name"]
        db_table = "runs_worker"  # the table the runs app first created; kept, not copied

    def __str__(self) -> str:
        return self.name
