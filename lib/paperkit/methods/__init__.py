"""One package per paper: the methods behind the commands (no CLI code here)."""
