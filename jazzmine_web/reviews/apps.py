from __future__ import annotations

from django.apps import AppConfig


class ReviewsConfig(AppConfig):
    name = "jazzmine_web.reviews"
    label = "reviews"
    verbose_name = "Reviews"

    def ready(self) -> None:
        # Connects the receivers of runs' `run_finished` and `run_created` and the catalog's
        # `catalog_changed` (the services package imports every module that holds one); here,
        # not at the top, because services import models, which load only once the app
        # registry is ready. `webhooks` holds the receivers of teams' `api_token_revoked` and
        # of the services' own `submission_event` (every event an agent's webhook hears).
        from . import services, webhooks  # noqa: F401
