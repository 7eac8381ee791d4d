from __future__ import annotations

from django.urls import path

from . import views

app_name = "teams"

urlpatterns = [
    path("account/tokens/", views.tokens, name="tokens"),
    path("account/password/", views.PasswordChange.as_view(), name="password"),
    path("account/tokens/<int:pk>/revoke/", views.token_revoke, name="token-revoke"),
]
