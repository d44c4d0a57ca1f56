"""``paperkit var-approx-pyramid``: the pyramid layer Φ_up (bicubic up-interpolation) of token maps."""

from __future__ import annotations

import click

from paperkit_cli import options


@options.command("var-approx-pyramid", short_help="Apply the pyramid layer Φ_up to token maps (x.npy → pyramid.npy).")
@click.option("--input", "input_path", required=True, metavar="FILE",
              help="A .npy array of initial maps, (N, H, W, C) or (H, W, C), finite numbers.")
@click.option("--scales", default="2,4,8", show_default=True, metavar="LIST|var|geom:A:B:K",
              help="Side lengths of the maps (increasing, from the input's side), 'var' or geom:FIRST:LAST:COUNT.")
@click.option("--mask", type=click.Choice(["none", "block"]), default="none", show_default=True,
              help="Mask whose attention cost is reported (block: VAR's block-causal mask).")
@click.option("-o", "--output", required=True, metavar="PATH.npy", help="Where to write the (N, L, C) tokens.")
def cli(input_path, scales, mask, output):
    """Concatenate X_1 = X_init, X_{k+1} = bicubic(X_k) (torch, align_corners=False) into L = Σ h_k·w_k tokens.

    Reads a .npy array (N, H, W, C) or (H, W, C); writes (N, L, C) or (L, C) tokens to --output (.npy) and
    prints one JSON line with the token count L and the attention pairs per sample.

    \b
    Examples:
      $ paperkit var-approx-pyramid --input x2.npy --scales 2,4,8 -o pyramid.npy      # x2.npy: 2×2 maps
      $ paperkit var-approx-pyramid --input x1.npy --scales var --mask block -o var.npy  # 1×1: VAR's 1,2,3,4,5,6,8,10,13,16
    """
    import json

    from paperkit.core import io
    from paperkit.core.errors import UsageError
    from paperkit.methods.var_approx import pyramid as pyr
    from paperkit.methods.var_approx.run import pyramid_of
    from paperkit_cli import runtime

    if io.detect_format(output, default="npy") != "npy" or io.is_stdio(output):
        raise UsageError(f"--output {output}: expected a .npy file")
    x = io.read_array(io.require_file(input_path))
    sched = pyr.parse_scales(scales)
    tokens = pyramid_of(x, sched, str(input_path))
    io.write_array(output, tokens)
    init = (x.shape[-3], x.shape[-2])
    runtime.write_manifest(inputs=[input_path], output=output)
    options.echo_data(json.dumps({"output": str(output), "scales": list(sched), "tokens": pyr.token_count(sched, init),
                                  "attention_pairs": pyr.attention_pairs(sched, init, mask)}))
