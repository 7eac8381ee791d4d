"""Checks of the descriptions an LLM reads: the tool's and its parameters'."""

from __future__ import annotations

import json
import re
import unicodedata
from typing import Any

from .registry import Outcome, Registry
from .subject import Subject

CHECKS = Registry()

DESCRIPTION_MIN = 60
DESCRIPTION_MAX = 200
NON_TRIVIAL_MIN = 20

_FILLER = re.compile(
    r"\b(this tool|a (?:simple|powerful|handy|useful|helpful|great) (?:tool|utility)|simply|"
    r"basically|easy[- ]to[- ]use|helps? you|very|really|awesome|powerful|seamless(?:ly)?|"
    r"leverag(?:e|es|ing)|in order to|state[- ]of[- ]the[- ]art)\b",
    re.IGNORECASE,
)
_IMPLEMENTATION = re.compile(
    r"\b(stdin|stdout|stderr|json\.dumps|subprocess|python3?|node\.?js|javascript|script\.(?:py|js)|"
    r"urllib|requests library|pandas|numpy|sys\.exit|exit code|implemented|implementation|"
    r"under the hood|internally|http request|api call)\b",
    re.IGNORECASE,
)
_CONTRACT = re.compile(
    r"(\b(?:parameters?|params?|arguments?|integer|boolean|enum|json schema|defaults? (?:to|is)|"
    r"required|optional)\b|\bbetween -?\d+(?:\.\d+)? and -?\d+|--[a-z])",
    re.IGNORECASE,
)
_TRIGGER = re.compile(
    r"\b(when|whenever|if|asks?|asking|use (?:it |this )?(?:for|to|on|with|after|before|instead))\b",
    re.IGNORECASE,
)
_DILUTERS = (
    (_FILLER, "filler"),
    (_IMPLEMENTATION, "implementation detail"),
    (_CONTRACT, "call-contract detail (belongs in the parameters)"),
)


def _is_english(text: str) -> bool:
    """Tell whether the letters of a text are (almost all) Latin ASCII letters."""
    letters = [c for c in text if c.isalpha()]
    if not letters:
        return True
    ascii_letters = sum(1 for c in letters if c.isascii())
    return ascii_letters / len(letters) >= 0.95 and not any(
        "CJK" in unicodedata.name(c, "") for c in letters
    )


@CHECKS.register(
    "description_length", f"tool description is {DESCRIPTION_MIN}-{DESCRIPTION_MAX} characters"
)
def description_length(subject: Subject) -> Outcome:
    """Pass when the tool description is long enough to say when, short enough to stay plain."""
    length = len(subject.description.strip())
    if length < DESCRIPTION_MIN:
        return (
            False,
            f"{length} characters: too short to say when to use the tool (min {DESCRIPTION_MIN})",
        )
    if length > DESCRIPTION_MAX:
        return False, (
            f"{length} characters (max {DESCRIPTION_MAX}): move types, enums and bounds into "
            "the parameter descriptions"
        )
    return True, f"{length} characters"


@CHECKS.register("description_usefulness", "tool description says when to use it, in plain English")
def description_usefulness(subject: Subject) -> Outcome:
    """Pass when the description is English, free of filler and details, and says when."""
    description = subject.description
    if not description.strip():
        return False, "description is empty"
    problems = []
    if not _is_english(description):
        problems.append("write it in English")
    for pattern, why in _DILUTERS:
        match = pattern.search(description)
        if match:
            problems.append(f"{why}: {match.group(0)!r}")
    if not _TRIGGER.search(description):
        problems.append("say when to call it (e.g. 'Use when the user asks ...')")
    return (not problems, "; ".join(problems) or "ok")


@CHECKS.register(
    "parameter_descriptions", "parameter descriptions are complete for non-trivial types"
)
def parameter_descriptions(subject: Subject) -> Outcome:
    """Pass when each parameter description is English and explains enums and structures."""
    problems = []
    for name, prop in subject.props.items():
        description = prop.get("description")
        if isinstance(description, str) and description.strip():
            problems.extend(_parameter_problems(name, prop, description))
        # else property_fields reports a missing description
    return (not problems, "; ".join(problems) or "ok")


def _parameter_problems(name: str, prop: dict[str, Any], description: str) -> list[str]:
    """List what one parameter's description lacks."""
    problems = []
    if not _is_english(description):
        problems.append(f"{name}: write the description in English")
    enum = prop.get("enum") if isinstance(prop.get("enum"), list) else None
    length = len(description.strip())
    if (prop.get("type") in ("object", "array") or enum) and length < NON_TRIVIAL_MIN:
        problems.append(
            f"{name}: {length} characters is too short for a "
            f"{'enum' if enum else prop.get('type')} (min {NON_TRIVIAL_MIN}; give accepted values and an example)"
        )
    if enum:
        lowered = description.lower()
        unexplained = [v for v in enum if str(v).lower() not in lowered]
        if unexplained:
            problems.append(
                f"{name}: enum values not explained in the description: "
                f"{', '.join(json.dumps(v) for v in unexplained)}"
            )
    return problems
