"""Options shared by cogmath-eval and cogmath-generate: the model/backend and its response cache.

Defaults are those of :class:`paperkit.methods.cogmath.run.BackendSettings` (tests check they agree).
"""

from __future__ import annotations

from collections.abc import Callable

import click

from paperkit_cli import options

BACKEND_CHOICES = ["openai", "shell", "hf", "rule", "replay"]
DTYPE_CHOICES = ["auto", "float32", "bfloat16", "float16"]
MAX_TIMEOUT_S = 86_400.0


BACKEND_HELP = ("openai: an OpenAI-compatible server; shell: a program (prompt on stdin, answer on stdout); hf: a "
                "local transformers model; rule: the template-aware rule solver (a simulated model, not an LLM); "
                "replay: answers from --cache only.")


def backend_options(f: Callable | None = None, *, required: bool = True) -> Callable:
    """The model/backend options shared by cogmath-eval (``--backend`` required: there is no silent default
    model) and cogmath-generate (``required=False``: only its LLM agents use a backend)."""
    if f is None:
        return lambda g: backend_options(g, required=required)
    decorators = [
        click.option("--backend", type=click.Choice(BACKEND_CHOICES), required=required,
                     # click counts an explicit default of None as given: a required option has none
                     **({} if required else {"default": None}),
                     help=("Required. " if required else "Needed with --agents llm. ") + BACKEND_HELP),
        click.option("--model", default=None, metavar="NAME|PATH",
                     help="openai: the model name the server serves; hf: a local Hugging Face model folder "
                          "(nothing is downloaded); replay: the cache's model to replay; shell, rule: the name "
                          "answers are cached under."),
        click.option("--base-url", default="http://127.0.0.1:8000/v1", show_default=True, metavar="URL",
                     help="OpenAI-compatible endpoint (vLLM, llama.cpp, Ollama, a hosted API)."),
        click.option("--api-key-env", default=None, metavar="VAR",
                     help="Environment variable holding the API key (never stored); none for local servers."),
        click.option("--cmd", default=None, metavar="'PROG ARGS'",
                     help="Shell backend program and arguments, split like a shell would but run without one: "
                          "shell syntax (| > < ; & $VAR ~ backticks) reaches the program as plain arguments, "
                          "and a warning names it (wrap pipelines in a script, or use sh -c '...')."),
        click.option("--dtype", type=click.Choice(DTYPE_CHOICES), default=None,
                     help="hf backend: precision of the weights; auto is the model's own [default: float32 on "
                          "CPU, auto on CUDA]. Part of the cache key."),
        click.option("--failures", default=None, metavar="SPEC",
                     help="rule backend failure modes, e.g. 'memorise' or 'distracted:0.5,literal' (modes: "
                          "memorise, literal, distracted, no_refusal, no_backward, no_intermediate, off_by_one)."),
        click.option("--timeout", type=options.FiniteFloat(0.0, MAX_TIMEOUT_S, min_open=True), default=60.0,
                     show_default=True, help="Seconds per request (openai, shell), in (0, 86400]."),
        click.option("--retries", type=click.IntRange(min=0), default=2, show_default=True,
                     help="openai: retries with exponential backoff on timeouts, 429 and 5xx; cogmath-generate "
                          "also gives each dimension N+1 inquiry proposals before recording it as missing."),
        click.option("--max-tokens", type=click.IntRange(min=1), default=1024, show_default=True,
                     help="Longest answer to generate (openai, hf)."),
        click.option("--cache", default=None, type=click.Path(dir_okay=False), metavar="FILE",
                     help="Response cache (SQLite; several runs may share one) to reuse and extend "
                          "[default: cache.sqlite in the run dir]. An old JSONL cache is migrated into FILE.sqlite."),
        click.option("--prompts", "prompts_file", default=None, type=click.Path(dir_okay=False), metavar="FILE",
                     help="YAML overriding the shipped prompt templates and extraction settings."),
        click.option("--jobs", "-j", type=options.JOBS, default=0, show_default=True,
                     help="Requests in flight at once (openai, shell) and torch threads (hf); 0 means one per "
                          "CPU core (under make -jN, the cores divided by N). Results do not depend on it."),
        options.seed_option, options.device_option,
    ]
    for d in reversed(decorators):
        f = d(f)
    return f
