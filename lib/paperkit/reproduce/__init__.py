"""The reproduction harness: claims registry, criteria and runner (see registry.py)."""

from paperkit.reproduce.registry import Claim, available, load  # noqa: F401
