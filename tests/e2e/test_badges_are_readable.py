"""Every status badge reads at WCAG AA: contrast of text on its background is 4.5:1 or more.

Computed from what Chromium renders with the real stylesheet: the badges the pages show, plus
one badge for every state the models can be in (a page shows only the states its data has).
"""

from __future__ import annotations

import pytest

from jazzmine_web.catalog.selectors import ImageStatus
from jazzmine_web.reviews.models import DeliveryStatus, SubmissionStatus
from jazzmine_web.runs.models import RunStatus

pytestmark = pytest.mark.e2e

WCAG_AA = 4.5
STATE_CLASSES = sorted(
    {f"badge-{c}" for c in (ImageStatus.UP_TO_DATE, ImageStatus.NEEDS_REBUILD,
                             ImageStatus.BUILDING, ImageStatus.FAILED)}
    | {f"status-{s}" for s in RunStatus.values}
    | {"status-violations", "status-llm_error", "status-drafted"}
    | {f"sub-{s}" for s in SubmissionStatus.values}
    | {f"delivery-{s}" for s in DeliveryStatus.values}
)  # fmt: skip

# Relative luminance and contrast as WCAG 2.1 defines them; the background is the first
# opaque one found walking up from the badge.
MEASURE = """
(extra) => {
  const host = document.createElement('div');
  for (const cls of extra) {
    const span = document.createElement('span');
    span.className = 'badge ' + cls;
    span.textContent = cls;
    host.appendChild(span);
  }
  document.querySelector('main').appendChild(host);
  const rgb = (text) => (text.match(/[\\d.]+/g) || []).map(Number);
  const lum = ([r, g, b]) => {
    const c = [r, g, b].map(v => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; });
    return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2];
  };
  const background = (el) => {
    for (let node = el; node; node = node.parentElement) {
      const parts = rgb(getComputedStyle(node).backgroundColor);
      if (parts.length >= 3 && (parts.length === 3 || parts[3] > 0)) return parts;
    }
    return [255, 255, 255];
  };
  return [...document.querySelectorAll('.badge, .review-badge, .tool-chip')].map(el => {
    const fg = lum(rgb(getComputedStyle(el).color)), bg = lum(background(el));
    const ratio = (Math.max(fg, bg) + 0.05) / (Math.min(fg, bg) + 0.05);
    return {cls: el.className, text: el.textContent.trim().slice(0, 40), ratio};
  });
}
"""


def test_every_badge_state_meets_wcag_aa_contrast(logged_in_page, studio_server) -> None:
    page = logged_in_page
    measured = []
    for path in ("/", "/catalog/", "/runs/", "/reviews/", "/reviews/audit/"):
        page.goto(f"{studio_server.url}{path}")
        measured += page.evaluate(MEASURE, STATE_CLASSES if path == "/" else [])
    page.goto(f"{studio_server.url}/catalog/")
    page.click("tr.tool-row >> text=get_orders")
    page.wait_for_selector("#tool-xml")
    measured += page.evaluate(MEASURE, [])

    seen = {m["cls"] for m in measured}
    assert all(any(cls in s.split() for s in seen) for cls in STATE_CLASSES)
    unreadable = [m for m in measured if m["ratio"] < WCAG_AA]
    assert not unreadable, "\n".join(
        f"{m['ratio']:.2f}:1  {m['cls']!r} ({m['text']})" for m in unreadable
    )
