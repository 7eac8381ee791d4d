"""Each attempt keeps the task it was made for; the session keeps only its latest.

The attempts stored before get theirs where something tells it for sure: the prompt an
attempt answers quotes its task (after "Task:", at the end of a first prompt, before the
tools in a retry's), so one of the tasks its session is known to have held (its latest, and
its runs') is taken only if that prompt quotes it exactly; a person's
attempt without a prompt takes its run's, written from the session in the same request. An
attempt nothing tells keeps None, and the pages say its task was not recorded rather than
name the session's latest.
"""

from __future__ import annotations

from typing import Any

from django.db import migrations, models


def _quotes(prompt: str, task: str) -> bool:
    """Tell whether a prompt is one written for `task` (`ScriptGenerator.build_prompt`)."""
    quoted = f"Task:\n{task.strip()}\n"
    return prompt.endswith(quoted) or f"{quoted}\nAvailable tools:\n" in prompt


def tasks_from_prompts_and_runs(apps: Any, schema_editor: Any) -> None:
    Attempt = apps.get_model("playground", "Attempt")
    alias = schema_editor.connection.alias
    attempts = Attempt.objects.using(alias).select_related("session", "run")
    # The tasks each session is known to have held: its latest, and those its runs were for.
    held: dict[Any, list[str]] = {}
    for session_id, task in attempts.filter(run__isnull=False).values_list(
        "session_id", "run__task"
    ):
        held.setdefault(session_id, []).append(task)
    for attempt in attempts.filter(task__isnull=True).iterator():
        candidates = [attempt.run.task] if attempt.run is not None else []
        candidates += [attempt.session.task, *held.get(attempt.session_id, [])]
        task = None
        if attempt.prompt:
            task = next((c for c in candidates if _quotes(attempt.prompt, c)), None)
        elif attempt.source == "human" and attempt.run is not None:
            task = attempt.run.task
        if task is not None:
            Attempt.objects.using(alias).filter(pk=attempt.pk).update(task=task)


class Migration(migrations.Migration):
    dependencies = [
        ("playground", "0003_attempt_stopped"),
    ]

    operations = [
        migrations.AddField(
            model_name="attempt",
            name="task",
            field=models.TextField(blank=True, null=True),
        ),
        migrations.RunPython(tasks_from_prompts_and_runs, migrations.RunPython.noop),
    ]
