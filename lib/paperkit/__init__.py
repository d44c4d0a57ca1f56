"""paperkit: ICML 2025 papers as real, fast, tested tools.

The library (this package) never parses argv, prints or exits; the command-line layer lives in
``paperkit_cli``.
"""

__version__ = "0.1.0"
