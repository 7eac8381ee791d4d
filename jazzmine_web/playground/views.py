"""Playground pages: the page itself, its prompt panel, attempts, comparisons, LLM settings."""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.db.models import Count
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods

from ..catalog.selectors import sandboxes_for_user
from ..studio.http import NotFound
from ..studio.untrusted import id_number
from . import selectors, services
from .consumers import MAX_BODY_CHARS
from .forms import LLMSettingsForm
from .models import PlaygroundSession


def _no_session() -> NotFound:
    # Another user's, malformed, deleted, or in a sandbox this user may no longer see (they
    # left its team): the same words for each, so none tells that the session exists.
    return NotFound(
        "You have no playground session with the id this address names: it may have been "
        "deleted, or its sandbox may no longer be yours to see.",
        back=(reverse("playground:index"), "Open the playground"),
    )


def _sandbox(request: HttpRequest, value: str | None):
    sandboxes = sandboxes_for_user(request.user)
    if value:
        number = id_number(value)
        return sandboxes.filter(pk=number).first() if number is not None else None
    return sandboxes.first()


def _language(request: HttpRequest) -> str:
    """Return the script language the page asks for: python unless bash is asked."""
    return "bash" if request.GET.get("language") == "bash" else "python"


@require_GET
def playground(request: HttpRequest) -> HttpResponse:
    """Show the playground for a sandbox (and a session to continue, if given)."""
    session = selectors.session_for_user(request.user, request.GET.get("session"))
    if session is None and request.GET.get("session"):
        raise _no_session()
    sandbox = session.sandbox if session else _sandbox(request, request.GET.get("sandbox"))
    if sandbox is None and session is None and request.GET.get("sandbox"):
        # A stale bookmark or a sandbox of another team: "you have no sandbox yet" misled
        # a person who has some. The same answer for each, as for sessions.
        raise NotFound(
            "You have no sandbox with the id this address names: it may have been deleted, "
            "or belong to a team you are not in.",
            back=(reverse("playground:index"), "Open the playground"),
        )
    task = session.task if session else request.GET.get("task", "")
    attempts = selectors.session_attempts(session) if session else []
    last = attempts[-1] if attempts else None
    language = _language(request)
    if "language" not in request.GET and last is not None:
        language = last.language  # a session reopens in the language it last used
    prompt = (
        services.prompt_for(sandbox=sandbox, task=task, session=session, language=language)
        if sandbox is not None
        else None
    )
    context = {
        "sandboxes": sandboxes_for_user(request.user),
        "sandbox": sandbox,
        "session": session,
        "task": task,
        "prompt": prompt,
        "retry": False,
        "attempts": attempts,
        "body": last.body if last else "",
        "last_run": last.run if last else None,
        "last_attempt": last,
        "llm": services.llm_config_for(request.user),
        # With when each was last used and how far it got: "ecommerce: (no task)" ten times
        # over told none apart.
        "max_body_chars": MAX_BODY_CHARS,
        "recent_sessions": selectors.sessions_for_user(request.user).annotate(
            attempt_count=Count("attempts")
        )[:10],
        "max_attempts": 3,
        "language": language,
    }
    return render(request, "playground/playground.html", context)


@require_GET
def prompt_panel(request: HttpRequest) -> HttpResponse:
    """Render the prompt of the next attempt (first form, or the retry form)."""
    sandbox = _sandbox(request, request.GET.get("sandbox"))
    if sandbox is None:
        raise Http404("No such sandbox")
    session = selectors.session_for_user(request.user, request.GET.get("session"))
    if session is not None and session.sandbox_id != sandbox.pk:
        session = None
    retry = request.GET.get("retry") == "1"
    language = _language(request)
    prompt = services.prompt_for(
        sandbox=sandbox,
        task=request.GET.get("task", ""),
        session=session,
        retry=retry,
        language=language,
    )
    return render(
        request,
        "playground/playground.html#prompt-panel",
        {
            "prompt": prompt,
            "retry": retry,
            "sandbox": sandbox,
            "session": session,
            "language": language,
        },
    )


@require_GET
def attempt_list(request: HttpRequest, session_id: str) -> HttpResponse:
    """Render the attempts of a session."""
    session = selectors.session_for_user(request.user, session_id)
    if session is None:
        raise _no_session()
    return render(
        request,
        "playground/playground.html#attempt-list",
        {"session": session, "attempts": selectors.session_attempts(session)},
    )


@require_GET
def compare(request: HttpRequest, session_id: str) -> HttpResponse:
    """Compare two attempts of a session: scripts, prompts, hints, timings and tokens."""
    session = selectors.session_for_user(request.user, session_id)
    if session is None:
        raise _no_session()
    # The session is there: what is missing is the attempts, and the page says which.
    back = (f"{reverse('playground:index')}?session={session.pk}", "Back to the session")
    a, b = _compare_numbers(request, back)
    comparison = selectors.attempts_compare(session, a, b)
    if comparison is None:
        raise NotFound(_no_attempts(session, a, b), back=back)
    return render(
        request, "playground/compare.html", {"session": session, "comparison": comparison}
    )


def _compare_numbers(request: HttpRequest, back: tuple[str, str]) -> tuple[int, int]:
    """Return the attempt numbers ?a= and ?b= name, or say what is wrong with them."""
    given = {name: request.GET.get(name, "") for name in ("a", "b")}
    if not any(given.values()):
        raise NotFound(
            "Compare needs the numbers of two attempts of this session (?a=1&b=2): pick them "
            "in the session's list of attempts.",
            back=back,
        )
    a, b = id_number(given["a"]), id_number(given["b"])
    if a is None or b is None:
        what = (
            "a and b are not numbers" if a is None and b is None
            else f"{'a' if a is None else 'b'} is not a number"
        )  # fmt: skip
        raise NotFound(f"Compare names its two attempts by number (?a=1&b=2): {what}.", back=back)
    return a, b


def _no_attempts(session: PlaygroundSession, a: int, b: int) -> str:
    """Say which of two attempt numbers a session has no attempt of, and which it has."""
    numbers = selectors.attempt_numbers(session)
    missing = " or ".join(f"attempt {n}" for n in sorted({a, b} - set(numbers)))
    # Numbered from 1 as they come, and never deleted one by one: the first and last say all.
    has = f"its attempts are numbered 1 to {numbers[-1]}" if numbers else "it has no attempts"
    return f"This session has no {missing}: {has}."


@require_http_methods(["GET", "POST"])
def llm_settings(request: HttpRequest) -> HttpResponse:
    """Edit the user's own LLM endpoint."""
    row = selectors.llm_settings_for(request.user)
    if request.method == "POST":
        form = LLMSettingsForm(request.POST)
        if form.is_valid():
            data = form.cleaned_data
            key = "" if data["clear_key"] else (data["api_key"] or None)
            services.llm_settings_save(
                user=request.user,
                base_url=data["base_url"] or "",
                model=data["model"] or "",
                api_key=key,
                temperature=data["temperature"],
            )
            messages.success(request, "LLM settings saved.")
            return redirect("playground:settings")
    else:
        initial = (
            {"base_url": row.base_url, "model": row.model, "temperature": row.temperature}
            if row
            else {}
        )
        form = LLMSettingsForm(initial=initial)
    return render(
        request,
        "playground/settings.html",
        {
            "form": form,
            "has_key": bool(row and row.api_key_ciphertext),
            "server_default": settings.JAZZMINE_LLM_BASE_URL and settings.JAZZMINE_LLM_MODEL,
            "server_base_url": settings.JAZZMINE_LLM_BASE_URL,
            "server_model": settings.JAZZMINE_LLM_MODEL,
        },
        # A refused form is 422, as on every other page: a client can tell it was not saved.
        status=422 if form.is_bound else 200,
    )
