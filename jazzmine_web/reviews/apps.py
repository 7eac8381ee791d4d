from __future__ import annotations

from django.apps import AppConfig


class ReviewsConfig(AppConfig):
    name = "jazzmine_web.reviews"
    label = "reviews"
    verbose_name = "Reviews"
