from __future__ import annotations

from django.apps import AppConfig


class PlaygroundConfig(AppConfig):
    """The prompt debugger: prompts, live validation, LLM generation, retries, live runs."""

    name = "jazzmine_web.playground"
    label = "playground"
