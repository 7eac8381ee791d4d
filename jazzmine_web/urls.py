"""URL routes of Jazzmine Studio."""

from __future__ import annotations

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path, re_path, reverse_lazy
from django.views.generic import RedirectView

from .catalog.views import home
from .teams.auth import api_not_found

handler400 = "jazzmine_web.studio.views.bad_request"
handler404 = "jazzmine_web.studio.views.page_not_found"

urlpatterns = [
    path("login/", auth_views.LoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    # The admin's own form checks the current password with nothing counting the guesses:
    # people change theirs on the account page, where they count as failed logins.
    path("admin/password_change/", RedirectView.as_view(url=reverse_lazy("teams:password"))),
    path("admin/", admin.site.urls),
    # The home page lists the catalog's sandboxes; outside the `catalog:` names, as it always was.
    path("", home, name="home"),
    path("", include("jazzmine_web.catalog.urls")),
    path("", include("jazzmine_web.runs.urls")),
    path("", include("jazzmine_web.playground.urls")),
    path("", include("jazzmine_web.scripttools.urls")),
    path("", include("jazzmine_web.teams.urls")),
    path("", include("jazzmine_web.studio.urls")),
    path("", include("jazzmine_web.reviews.urls")),
    # Last: whatever under /api/ matched no endpoint answers as the API does, in JSON.
    re_path(r"^api/(?P<rest>.*)$", api_not_found),
]
