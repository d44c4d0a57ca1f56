"""``paperkit cogmath-generate``: problems → CogMath inquiries (nine dimensions) as JSONL."""

from __future__ import annotations

import click

from paperkit_cli import options
from paperkit_cli.commands._cogmath_common import backend_options

SETTINGS = "paperkit.methods.cogmath.run:GenerateSettings"


@options.command("cogmath-generate", short_help="Make the nine CogMath inquiries of each problem (JSONL).")
@click.option("--source", required=True, metavar="SPEC",
              help="synthetic:N (generated word problems with exact references), official:FILE.json (the "
                   "CogMath repository layout, imported as is), or problems:FILE.jsonl (id, question, answer; "
                   "needs --agents llm).")
@click.option("--agents", type=click.Choice(["rule", "llm"]), default="rule", show_default=True,
              help="rule: program-backed agents (synthetic source); llm: Inquiry/Judge/Reference agents "
                   "through --backend (openai, shell, hf or replay).")
@click.option("--min-steps", type=click.IntRange(1, 8), default=2, show_default=True,
              help="Synthetic problems: fewest reasoning steps after the starting quantity.")
@click.option("--max-steps", type=click.IntRange(1, 8), default=4, show_default=True,
              help="Synthetic problems: most reasoning steps.")
@backend_options(required=False)
@click.option("-o", "--output", default="-", show_default=True, metavar="PATH",
              help="Inquiry JSONL to write; '-' is stdout.")
@click.option("--manifest", "manifest_path", default=None, metavar="PATH",
              help="Where to write the manifest [default: <output>.manifest.json; none for stdout].")
def cli(source, prompts_file, cache, output, manifest_path, **_):
    """Make the nine CogMath inquiries of each problem (JSONL).

    Writes one JSON line per problem and dimension (0 = the original problem, 1-9 = the inquiries):
    inquiry text, expected outcome (answer, unsolvable or explain), reference answer, the Judge's
    verdict and the number of attempts. Synthetic problems are small programs rendered to text, so
    every reference is exact (re-executed, or solved with sympy for backward reasoning). A file in
    the official layout is imported as is; plain problems get their inquiries from LLM agents.
    --retries N gives each dimension N+1 inquiry proposals (and the openai backend N HTTP retries)
    before the dimension is recorded as missing.

    \b
    Examples:
      $ paperkit cogmath-generate --source synthetic:200 --seed 1 -o inquiries.jsonl
      $ paperkit cogmath-generate --source synthetic:3 | head -2
      $ paperkit cogmath-generate --source synthetic:50 --min-steps 3 --max-steps 5 -o harder.jsonl

    Official files and LLM agents (not runnable without the file or a server):
    --source official:GSM8K.json, or --source problems:mine.jsonl --agents llm --backend openai
    --model NAME [--api-key-env VAR].
    """
    from paperkit.methods.cogmath.run import (
        GenerateSettings,
        execute_generate,
        log_warnings,
        prepare_generate,
    )
    from paperkit.methods.cogmath.sources import write_inquiries
    from paperkit_cli import runtime

    s = runtime.settings(GenerateSettings)
    inputs = prepare_generate(s, source, prompts_file=prompts_file, cache=cache)
    log_warnings(inputs.warnings)
    result = execute_generate(inputs)
    write_inquiries(output, result.rows)
    runtime.write_manifest(inputs=inputs.files, output=output, manifest_path=manifest_path, seed=s.seed,
                           extra={"problems": len(result.problems), "rows": len(result.rows)})
