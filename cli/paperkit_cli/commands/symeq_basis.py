# ruff: noqa: E741  (k and l are the paper's input and output tensor orders)
"""``paperkit symeq-basis``: the exact orbit or diagram basis of S_n-equivariant maps S^k → S^l (Pearce-Crump, ICML 2025)."""

from __future__ import annotations

import click

from paperkit_cli import options

SETTINGS = "paperkit.methods.symeq.run:BasisSettings"


@options.command("symeq-basis", writes=("dense",),
                 short_help="Exact orbit/diagram basis of S_n-equivariant maps between symmetric tensors.")
@click.option("--k", type=int, default=2, show_default=True, help="Input tensor order (0-6).")
@click.option("--l", type=int, default=2, show_default=True, help="Output tensor order (0-6).")
@click.option("--n", type=int, default=5, show_default=True, help="Dimension n of R^n (the size of each index).")
@click.option("--kind", type=click.Choice(["orbit", "diagram"]), default="orbit", show_default=True,
              help="orbit: labels present at n (independent for every n); diagram: all labels, with the exact "
                   "integer change of basis D = C·X and its Möbius inverse (independent when n >= k+l).")
@click.option("--dense", type=click.Path(dir_okay=False), default=None, metavar="PATH.npy",
              help="Also write the basis matrices on packed entries as an [L, C(n+l-1,l), C(n+k-1,k)] float64 .npy.")
@options.json_output_options
def cli(k, l, n, kind, dense, output, manifest_path):
    """Enumerate the basis of the S_n-equivariant linear maps S^k(R^n) -> S^l(R^n).

    A label is a multiset of parts (out,in): the number of output and input legs sharing one index value,
    e.g. (1,1)(1,1) is the identity of S^2 and (1,0)(0,1) maps v to its sum broadcast. Prints JSON: size,
    stable size (n >= k+l), packed dimensions, labels (parts, contractions, orbit size), and for --kind
    diagram the change of basis (integers) and its inverse (exact fractions). Counts match brute force.

    \b
    Examples:
      $ paperkit symeq-basis --k 2 --l 2 --n 5
      $ paperkit symeq-basis --k 3 --l 1 --n 4 --kind diagram --dense basis.npy
    """
    from paperkit.core import io
    from paperkit.methods.symeq.run import BasisSettings, dense_basis, describe_basis, prepare_basis
    from paperkit_cli import runtime

    s = prepare_basis(runtime.settings(BasisSettings), dense is not None)
    result = describe_basis(s)
    outputs = []
    if dense is not None:
        io.write_array(dense, dense_basis(s))
        result["dense"] = dense
        outputs.append(dense)
    if io.is_stdio(output):
        options.echo_data(io.dumps_json(result, indent=None))
    else:
        io.write_json(output, result)
    options.report(f"symeq-basis: {result['size']} {kind} basis elements for S^{k} -> S^{l} at n={n} "
                   f"(stable size {result['stable_size']})")
    runtime.write_manifest(outputs=outputs, output=output, manifest_path=manifest_path)
