// How htmx treats answers, for every page. A refused form comes back as 422 with its own
// partial, errors in place: swap it like a 2xx (htmx 2 swaps no 4xx by default, and the
// debug handler of django-htmx replaces the whole page for 400/403/404/500 only).
htmx.config.responseHandling = [
  { code: "204", swap: false },
  { code: "[23]..", swap: true },
  { code: "422", swap: true, error: false },
  { code: "[45]..", swap: false, error: true },
];
// The Content-Security-Policy (jazzmine_web/settings.py) allows no eval and no inline code:
// htmx never evaluates attribute text (hx-on, trigger filters, js: values) — page behaviour
// lives in static files — and it adds no <style> of its own (studio.css has the indicator
// rules). This file runs before DOMContentLoaded, when htmx reads its config.
htmx.config.allowEval = false;
htmx.config.includeIndicatorStyles = false;
// Requests go to this server only (htmx 2's default, stated so no page turns it off).
htmx.config.selfRequestsOnly = true;
