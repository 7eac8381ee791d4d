"""The sample script tools (`fixtures/`): paths, and their files as data to break."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).resolve().parent / "fixtures"
RSI = FIXTURES / "calculate_rsi"
PRICES = FIXTURES / "summarize_prices"


def rsi_json() -> dict[str, Any]:
    """Return the good calculate_rsi tool.json as a dict to break."""
    return json.loads((RSI / "tool.json").read_text())


def rsi_script() -> str:
    """Return the good calculate_rsi script to break."""
    return (RSI / "script.py").read_text()
