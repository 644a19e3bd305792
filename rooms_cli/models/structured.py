"""Reading structured output out of a model's reply: the JSON values it holds, in order."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator


def json_values(text: str, opening: str = "{[") -> Iterator[object]:
    """Every JSON value that starts at one of the `opening` characters of `text`, in order (code fences
    dropped first): a small model often wraps its object in prose or in a ```json fence."""
    decoder = json.JSONDecoder()
    cleaned = re.sub(r"```(?:json)?", "", text)
    for match in re.finditer("[" + re.escape(opening) + "]", cleaned):
        try:
            value, _ = decoder.raw_decode(cleaned, match.start())
        except json.JSONDecodeError:
            continue
        yield value
