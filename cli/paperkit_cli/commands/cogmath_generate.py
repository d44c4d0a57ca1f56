"""``paperkit cogmath-generate``: problems → CogMath inquiries (nine dimensions) as JSONL."""

from __future__ import annotations

import click

from paperkit_cli import options
from paperkit_cli.commands.cogmath_eval import backend_options, build_backend


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
@backend_options
@click.option("-o", "--output", default="-", show_default=True, metavar="PATH",
              help="Inquiry JSONL to write; '-' is stdout.")
@click.option("--manifest", "manifest_path", default=None, metavar="PATH",
              help="Where to write the manifest [default: <output>.manifest.json; none for stdout].")
def cli(**params: object) -> None:
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
    from paperkit.core.errors import UsageError
    from paperkit.core.progress import progress
    from paperkit.methods.cogmath import agents, backends, sources, synthetic
    from paperkit.methods.cogmath.prompts import load_prompts
    from paperkit_cli import runtime

    kind, _, arg = str(params["source"]).partition(":")
    if kind not in ("synthetic", "official", "problems") or not arg:
        raise UsageError(f"--source {params['source']!r}: expected synthetic:N, official:FILE.json or problems:FILE")
    if params["agents"] == "llm" and kind != "official" and params["backend"] not in ("openai", "shell", "hf", "replay"):
        raise UsageError(f"--agents llm needs a language model: --backend openai, shell, hf or replay "
                         f"(not {params['backend']})")
    if params["min_steps"] > params["max_steps"]:
        raise UsageError(f"--min-steps {params['min_steps']} is above --max-steps {params['max_steps']}")
    prompts = load_prompts(params["prompts_file"])
    inputs = [params["prompts_file"]]
    if kind == "synthetic":
        try:
            n = int(arg)
        except ValueError:
            raise UsageError(f"--source synthetic:{arg}: N must be a whole number") from None
        if not 1 <= n <= 1_000_000:
            raise UsageError(f"--source synthetic:{n}: N must be between 1 and 1000000")
        if params["agents"] == "rule":
            with progress(total=n, desc="cogmath-generate", unit="problem") as bar:
                problems, rows = synthetic.generate(n, params["seed"], max_retries=params["retries"] + 1,
                                                    min_steps=params["min_steps"], max_steps=params["max_steps"],
                                                    progress=bar.update)
        else:
            problems = [sources.Problem(p.id, p.text, str(synthetic.format_number(p.answer)), p.solution)
                        for p in synthetic.generate(n, params["seed"], max_retries=1, min_steps=params["min_steps"],
                                                    max_steps=params["max_steps"])[0]]
    elif kind == "official":
        problems, rows = sources.read_official(arg, cfg=prompts.extraction)
        inputs.append(arg)
    else:
        if params["agents"] != "llm":
            raise UsageError("--source problems:FILE needs --agents llm (rule agents need program-backed problems)")
        problems = sources.read_problems(arg, cfg=prompts.extraction)
        inputs.append(arg)
    if params["agents"] == "llm" and kind != "official":
        if params["backend"] == "replay" and not params["cache"]:
            raise UsageError("--backend replay needs --cache FILE")
        inner = build_backend(params, template=prompts.solve, memory=[])
        backend = backends.with_cache(inner, params["cache"], model=params["model"])
        try:
            rows = agents.llm_inquiries(problems, backend, prompts, seed=params["seed"],
                                        max_retries=params["retries"] + 1)
        finally:
            backend.cache.compact()
            backend.close()
    sources.write_inquiries(params["output"], rows)
    runtime.write_manifest(inputs=inputs, output=params["output"], manifest_path=params["manifest_path"],
                           seed=params["seed"], extra={"problems": len(problems), "rows": len(rows)})
