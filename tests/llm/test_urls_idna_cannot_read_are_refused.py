"""A host written as an A-label that IDNA refuses (`xn--localhost`) is refused, never a crash.

httpx decodes punycode only when `.host` is read; IDNA then raises idna.IDNAError (a
UnicodeError), which used to escape url_check and LLMConfig as a 500.
"""

from __future__ import annotations

import pytest

from jazzmine.llm import LLMConfig, LLMConfigError
from jazzmine.net import STRICT, OutboundPolicy, OutboundURLRefused, url_check

BAD_A_LABELS = [
    "http://xn--localhost/",
    "http://xn--/",
    "http://xn--ls8h.la/hook",
    "https://XN--LOCALHOST/",
    "http://xn--localhost:8080/v1",
    "http://xn--zz-zz.example.com/",
]


@pytest.mark.parametrize("url", BAD_A_LABELS)
def test_url_check_refuses_an_a_label_idna_cannot_decode(url: str) -> None:
    with pytest.raises(OutboundURLRefused, match="cannot be parsed"):
        url_check(url, policy=STRICT)


@pytest.mark.parametrize("url", BAD_A_LABELS)
def test_url_check_refuses_it_even_without_resolving_names(url: str) -> None:
    with pytest.raises(OutboundURLRefused, match="cannot be parsed"):
        url_check(url, policy=OutboundPolicy.from_entries(["xn--localhost"]), resolve_names=False)


@pytest.mark.parametrize("url", BAD_A_LABELS)
def test_an_llm_base_url_with_such_a_label_is_a_config_error(url: str) -> None:
    with pytest.raises(LLMConfigError, match="must be an http"):
        LLMConfig(url, model="m")
