"""Randomness: `ROOMS_SEED` fixes every random choice (not record ids, see ids.py)."""

from __future__ import annotations

import os
import random


def _digest(key: str) -> int:
    """64 bits of `key`'s SHA-256 (hashlib is imported here: ~2 ms a chat turn without ROOMS_SEED never pays)."""
    import hashlib

    return int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big")


def rng(*namespace: object) -> random.Random:
    """A Random for one purpose; with ROOMS_SEED it is the same for the same seed and namespace."""
    seed = os.environ.get("ROOMS_SEED")
    if seed is None or seed == "":
        return random.Random()
    return random.Random(_digest("\x1f".join([seed, *map(str, namespace)])))


def stable_random(*namespace: object) -> float:
    """A number in [0, 1) fixed by `namespace` alone (e.g. a schedule roll for slot + date)."""
    return _digest("\x1f".join(map(str, namespace))) / 2**64
