"""One thin module per command; each imports only click and paperkit_cli at top level and exposes ``cli``."""
