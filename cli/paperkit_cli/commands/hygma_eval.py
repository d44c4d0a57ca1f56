"""``paperkit hygma-eval``: greedy rollouts of a hygma-train model (Liu & Li, ICML 2025)."""

from __future__ import annotations

import click

from paperkit_cli import options

SETTINGS = "paperkit.methods.hygma.run:HygmaEvalSettings"


@options.command("hygma-eval", short_help="Greedy rollouts of a hygma-train model: return, success, groups (JSON).")
@click.option("--model", required=True, type=click.Path(dir_okay=False), metavar="PATH",
              help="A model.pt written by hygma-train.")
@click.option("--job", default=None, metavar="ALGO_sSEED",
              help="Which run in model.pt, e.g. hygma-qmix_s0 [default: the first].")
@click.option("--env", default=None, metavar="MODULE:FACTORY",
              help="For a model trained on your own env: name its module:factory again (a model file never "
                   "decides what code is imported).")
@click.option("--episodes", type=click.IntRange(1, 100_000), default=32, show_default=True,
              help="Evaluation episodes (greedy; hygma-ac samples its policy).")
@click.option("--ascii", is_flag=True, help="Render the first episode on stderr (digits: agents, P: prey, F: food).")
@options.seed_option
@options.device_option
@options.json_output_options
def cli(model, output, manifest_path, **_):
    """Roll out one trained job of a hygma-train run on its own environment and preset.

    Reads model.pt (the settings of the run and every job's weights and groups). Writes one JSON
    object: job, algo, env, preset, episodes, mean return, success (pp: catch rate; group-capture:
    catches per episode; lbf-lite: share collected), the groups in force (0-based, per agent) and, on
    group-capture, helped (catches each agent helped with, per prey), specialisation (mean share of an
    agent's help that went to its most-helped prey: 1 = one prey each, 0.5 = no preference between two)
    and the ARI of the groups against each agent's most-helped prey (null when there is no assignment:
    ties, or every agent on the same prey).

    \b
    Examples:
      $ paperkit hygma-train --env pp --preset easy --algo hygma-qmix --steps 20000 --run-dir runs/pp
      $ paperkit hygma-eval --model runs/pp/model.pt --episodes 64 -o eval.json
      $ paperkit hygma-eval --model runs/pp/model.pt --job hygma-qmix_s0 --episodes 1 --ascii
    """
    import json

    from paperkit.core import io
    from paperkit.methods.hygma.run import HygmaEvalSettings, execute_hygma_eval, prepare_hygma_eval
    from paperkit_cli import runtime

    s = runtime.settings(HygmaEvalSettings)
    inputs = prepare_hygma_eval(s, model)
    result = execute_hygma_eval(inputs)
    for frame in result.frames:
        options.report(frame + "\n")
    if io.is_stdio(output):
        options.echo_data(json.dumps(result.summary))
    else:
        io.write_json(output, result.summary)
    runtime.write_manifest(inputs=[model], output=output, manifest_path=manifest_path, seed=s.seed)
