"""Randomness: `ROOMS_SEED` fixes every random choice (not record ids, see ids.py)."""

from __future__ import annotations

import hashlib
import os
import random


def rng(*namespace: object) -> random.Random:
    """A Random for one purpose; with ROOMS_SEED it is the same for the same seed and namespace."""
    seed = os.environ.get("ROOMS_SEED")
    if seed is None or seed == "":
        return random.Random()
    key = "\x1f".join([seed, *map(str, namespace)]).encode()
    return random.Random(int.from_bytes(hashlib.sha256(key).digest()[:8], "big"))


def stable_random(*namespace: object) -> float:
    """A number in [0, 1) fixed by `namespace` alone (e.g. a schedule roll for slot + date)."""
    key = "\x1f".join(map(str, namespace)).encode()
    return int.from_bytes(hashlib.sha256(key).digest()[:8], "big") / 2**64
