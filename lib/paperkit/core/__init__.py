"""Shared core: errors, file I/O, manifests, configuration, seeding, progress and run directories.

Import submodules directly (``from paperkit.core import io``); this package imports nothing heavy.
"""
