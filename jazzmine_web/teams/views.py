"""Account pages: API tokens, created and revoked here (a new token is shown once); password."""

from __future__ import annotations

import json
import shlex
from typing import Any

from django.contrib import messages
from django.contrib.auth import views as auth_views
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse_lazy
from django.views.decorators.http import require_http_methods, require_POST

from ..studio.http import form_status
from .forms import ThrottledPasswordChangeForm, TokenForm
from .selectors import api_tokens_for_user, api_tokens_listed, teams_for_user
from .services import TOKEN_NAME_TAKEN, TokenNameTaken, api_token_create, api_token_revoke

# What the page's example submits: a script that calls no tool, so it runs in any sandbox.
EXAMPLE_TASK = "Say hello"
EXAMPLE_BODY = 'emit_result({"hello": "world"})\n'


def _api_example(request: HttpRequest, issued: Any) -> str:
    """Return shell commands an agent can paste as they are: list, submit, wait.

    They name this server as the browser reached it, one of the user's own sandboxes (or a
    placeholder when they have none) and the token just issued (else `$TOKEN`, set by hand).
    """
    origin = request.build_absolute_uri("/").rstrip("/")
    sandbox = (
        teams_for_user(request.user)
        .filter(sandboxes__isnull=False)
        .values_list("slug", "sandboxes__name")
        .order_by("name", "slug", "sandboxes__name")
        .first()
    )
    ref = "/".join(sandbox) if sandbox else "TEAM/SANDBOX"
    body = json.dumps({"sandbox": ref, "task": EXAMPLE_TASK, "body": EXAMPLE_BODY})
    token = issued.raw if issued is not None else "jzm_..."
    # `-w '\n'`: each answer on a line of its own, as JSON answers end without one.
    auth = '-H "Authorization: Bearer $TOKEN"'
    shown = f"curl -s -w '\\n' {auth}"
    read_id = "python3 -c 'import json, sys; print(json.load(sys.stdin)[\"id\"])'"
    return "\n".join(
        [
            f"TOKEN={shlex.quote(token)}",
            f"{shown} {origin}/api/v1/sandboxes/",
            f"ID=$(curl -s {auth} -H 'Content-Type: application/json' \\",
            f"  -d {shlex.quote(body)} \\",
            f"  {origin}/api/v1/submissions/ | {read_id})",
            f'{shown} "{origin}/api/v1/submissions/$ID/wait/?timeout=60&until=final"',
        ]
    )


def _context(request: HttpRequest, **extra: Any) -> dict[str, object]:
    return {
        # The list holds the form (a revoke's answer too): an empty one unless given.
        "form": TokenForm(user=request.user, request=request),
        "tokens": api_tokens_listed(request.user),
        "teams": teams_for_user(request.user).prefetch_related("memberships__user"),
        "api_example": _api_example(request, extra.get("issued")),
        **extra,
    }


@require_http_methods(["GET", "POST"])
def tokens(request: HttpRequest) -> HttpResponse:
    """List the user's API tokens and create new ones (the current password asked first)."""
    issued = None
    data = request.POST if request.method == "POST" else None
    form = TokenForm(data, user=request.user, request=request)
    if form.is_valid():
        try:
            issued = api_token_create(user=request.user, name=form.cleaned_data["name"])
        except TokenNameTaken:  # another request took the name since the form's check
            form.add_error("name", TOKEN_NAME_TAKEN)
    template = "teams/tokens.html"
    if request.htmx:
        template += "#token-list"
    context = _context(request, issued=issued, form=form)
    # Locked as a login is: the same 429 as the password page and the login page; but htmx
    # swaps no 429 (`htmx-config.js`), and its message must show, so htmx gets a refused form.
    status = 429 if form.locked and not request.htmx else form_status(form)
    return render(request, template, context, status=status)


@require_POST
def token_revoke(request: HttpRequest, pk: int) -> HttpResponse:
    """Revoke one of the user's tokens (another's, or none, is not found: it looked revoked)."""
    if not api_token_revoke(user=request.user, token_id=pk):
        if not api_tokens_for_user(request.user).filter(pk=pk).exists():
            raise Http404("No such token")
        messages.info(request, "That token was revoked already.")
    if request.htmx:
        return render(request, "teams/tokens.html#token-list", _context(request))
    return redirect("teams:tokens")


class PasswordChange(auth_views.PasswordChangeView):
    """Change one's own password: the old one first, the new one judged by the validators.

    Django's view keeps this session signed in and ends every other one (their open sockets
    close too, `studio.session_bound`): a password changed because it leaked locks the leak out.
    """

    template_name = "teams/password.html"
    success_url = reverse_lazy("teams:password")
    # The current password is checked as a login is: counted, and locked after the limit.
    form_class = ThrottledPasswordChangeForm

    def get_form_kwargs(self) -> dict[str, Any]:
        return {**super().get_form_kwargs(), "request": self.request}

    def form_invalid(self, form: Any) -> HttpResponse:
        response = super().form_invalid(form)
        if form.locked:
            response.status_code = 429
        return response

    def form_valid(self, form: Any) -> HttpResponse:
        response = super().form_valid(form)
        messages.success(self.request, "Password changed. Your other sessions are signed out.")
        return response
