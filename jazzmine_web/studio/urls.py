from __future__ import annotations

from django.contrib.auth.decorators import login_not_required
from django.templatetags.static import static
from django.urls import path
from django.views.generic import RedirectView

from . import views

urlpatterns = [
    path("pygments.css", views.pygments_css, name="pygments-css"),
    # Pages that name no icon (the admin's, a JSON answer opened in a tab) make browsers ask
    # for /favicon.ico: a 404 there is a console error on every such page.
    path(
        "favicon.ico",
        login_not_required(RedirectView.as_view(url=static("studio/favicon.svg"), permanent=True)),
    ),
]
