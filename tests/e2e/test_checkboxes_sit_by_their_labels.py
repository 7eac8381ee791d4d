"""A form's checkbox sits by its label, its own size, where a newcomer looks for it.

Every field of a form is as wide as the card; a checkbox given that width drew its tick in the
middle of the page, far from the words that say what it does ("Always allow", "network").
"""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.e2e]

FORMS = {
    "/catalog/sandboxes/new/": "network",
    "/catalog/sandboxes/1/tools/new/": "always_allow",
    "/catalog/sandboxes/1/script-tools/new/": "always_allow",
    "/playground/settings/": "clear_key",
}

# Where the checkbox is drawn, against the box of the form it is in.
PLACE = """(name) => {
  const box = document.querySelector(`input[type=checkbox][name=${name}]`);
  const form = box.closest("form").getBoundingClientRect();
  const own = box.getBoundingClientRect();
  return {width: own.width, fromLeft: own.left - form.left, formWidth: form.width};
}"""


@pytest.mark.parametrize("path", FORMS)
def test_the_checkbox_is_its_own_size_at_the_left(logged_in_page, path) -> None:
    page = logged_in_page
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(path)
    place = page.evaluate(PLACE, FORMS[path])
    assert place["width"] < 30, place
    # By its label at the left of the form: not the middle of a box as wide as the form.
    assert place["fromLeft"] < place["formWidth"] / 4, place
