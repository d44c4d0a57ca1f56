"""One package per paper: the methods behind the paperkit commands."""
