"""Configuration files: one flat YAML mapping of option names to values, checked against the command.

Precedence (applied by the CLI with click's own machinery): built-in default < ``--config`` file <
``PAPERKIT_<CMD>_<OPTION>`` environment variable < command-line flag.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Iterable, Mapping
from typing import Any

from paperkit.core import io
from paperkit.core.errors import ConfigError, InputError


def option_key(name: str) -> str:
    """Config keys may be written ``n-folds``, ``n_folds`` or ``--n-folds``; all mean ``n_folds``."""
    return name.strip().lstrip("-").replace("-", "_")


def env_var(command: str, option: str) -> str:
    """``PAPERKIT_<CMD>_<OPTION>``, e.g. ``PAPERKIT_CONFORMAL_CV_ALPHA``."""
    return f"PAPERKIT_{command.replace('-', '_').upper()}_{option_key(option).upper()}"


def load_config(path: str | os.PathLike, known: Iterable[str] | Mapping[str, str], *, command: str,
                shown: Iterable[str] | None = None) -> dict[str, Any]:
    """Read a YAML config and return it keyed by parameter name; unknown keys are an error naming them.

    ``known`` lists the accepted keys, or maps each accepted spelling to its parameter name.
    """
    try:
        data = io.read_yaml(path, strict=True)
    except InputError as e:
        raise ConfigError(str(e)) from None
    if data is None:
        return {}
    if not isinstance(data, Mapping):
        raise ConfigError(f"{path}: expected a mapping of option names to values, got {type(data).__name__}")
    if "_command" in data:  # a run dir's config.yaml names the command that wrote it: it can be fed back
        if data["_command"] != command:
            raise ConfigError(f"{path}: written by '{data['_command']}', not {command}")
        # its input hashes are bookkeeping for --resume, not options
        data = {k: v for k, v in data.items() if k != "_command" and not str(k).endswith("sha256")}
    return check_keys(data, known, source=str(path), command=command, shown=shown)


def check_keys(data: Mapping[Any, Any], known: Iterable[str] | Mapping[str, str], *, source: str,
               command: str, shown: Iterable[str] | None = None) -> dict[str, Any]:
    aliases = {option_key(k): v for k, v in known.items()} if isinstance(known, Mapping) else \
        {option_key(k): option_key(k) for k in known}
    shown = sorted(shown) if shown is not None else sorted({k.replace("_", "-") for k in aliases})
    out: dict[str, Any] = {}
    for raw_key, value in data.items():
        key = option_key(str(raw_key))
        if key not in aliases:
            close = difflib.get_close_matches(key.replace("_", "-"), shown, n=1)
            hint = f"; did you mean '{close[0]}'?" if close else f"; known keys: {', '.join(shown)}"
            raise ConfigError(f"{source}: unknown key '{raw_key}' for {command}{hint}")
        name = aliases[key]
        if name in out:
            raise ConfigError(f"{source}: option '{raw_key}' is given twice")
        out[name] = value
    return out
