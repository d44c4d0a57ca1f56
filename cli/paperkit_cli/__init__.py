"""paperkit's command-line layer: click wiring only; the methods live in the ``paperkit`` library."""
