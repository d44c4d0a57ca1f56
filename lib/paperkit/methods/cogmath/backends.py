"""Backends that answer prompts: the model under test, and the LLM agents/judges.

* ``openai`` — any OpenAI-compatible chat-completions endpoint (vLLM, llama.cpp server, Ollama, hosted
  APIs) through the official ``openai`` client: base URL, model, API key read from an environment
  variable, temperature 0, the run's seed, per-request timeout, the client's retries with exponential
  backoff, ``jobs`` concurrent requests, and ``max_completion_tokens`` for servers that refuse ``max_tokens``.
* ``shell``  — a program given as an argv list (never through a shell): the prompt on stdin, the
  answer on stdout, a timeout; a non-zero exit is a failed item.
* ``hf``     — a local Hugging Face causal LM folder (transformers), greedy decoding, batched, a chosen
  dtype; each prompt is tokenised once (through the chat template when the model has one).
* ``rule``   — the template-aware rule solver (:mod:`.solver`) with switchable failure modes, plus the
  memoriser; a reference model under test with known behaviour.
* ``replay`` — answers only from the response cache (:mod:`.cache`); a prompt not cached is a failed item.

Failures are of two kinds. A *per-item* failure (timeout, HTTP 5xx/429 after retries, HTTP 400, an
empty or malformed reply, a non-zero exit) is recorded for that prompt and never counted as a pass;
the run goes on. A *fatal* one (server unreachable, HTTP 401/403/404, program not found, the first
calls of an openai run all failing with the same error) stops the run with :class:`BackendFatal`; every answer already obtained is in the cache, so ``--resume``
continues from there. Credentials never enter settings, cache keys, messages or logs.
"""

from __future__ import annotations

import abc
import contextlib
import hashlib
import logging
import os
import re
import shlex
import shutil
import signal
import subprocess
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from paperkit.core.errors import InputError, PaperkitError, UsageError
from paperkit.methods.cogmath import solver
from paperkit.methods.cogmath.cache import ResponseCache, cache_key

log = logging.getLogger(__name__)


class BackendFatal(PaperkitError):
    """The backend cannot answer at all (unreachable, unauthorised, not found); the run stops (exit 1)."""


class ItemError(Exception):
    """One prompt failed; recorded for that item."""


@dataclass
class Completion:
    text: str | None
    error: str | None = None


OnDone = Callable[[int, Completion], None]


class Backend(abc.ABC):
    """Answers prompts; subclasses implement :meth:`generate` (thread-safe) and may batch in :meth:`complete`."""

    kind = "base"

    def __init__(self, model: str, *, jobs: int = 1):
        self.model = model
        self.jobs = max(1, int(jobs))

    @property
    def settings(self) -> str:
        """Generation parameters that change the output (part of the cache key)."""
        return ""

    @abc.abstractmethod
    def generate(self, prompt: str) -> str:
        """The answer to one prompt; raise ItemError for a failed item, BackendFatal to stop the run."""

    def _one(self, prompt: str) -> Completion:
        try:
            text = self.generate(prompt)
        except ItemError as e:
            return Completion(None, str(e))
        if text is None or not str(text).strip():
            return Completion(None, "empty response")
        return Completion(str(text))

    def complete(self, prompts: Sequence[str], on_done: OnDone | None = None) -> list[Completion]:
        out: list[Completion | None] = [None] * len(prompts)
        if self.jobs == 1 or len(prompts) <= 1:
            for i, p in enumerate(prompts):
                out[i] = self._one(p)
                if on_done:
                    on_done(i, out[i])
            return out  # type: ignore[return-value]
        fatal: BaseException | None = None
        with ThreadPoolExecutor(max_workers=self.jobs) as pool:
            futures = {pool.submit(self._one, p): i for i, p in enumerate(prompts)}
            pending = set(futures)
            try:
                while pending:
                    done, pending = wait(pending, return_when=FIRST_COMPLETED)
                    for f in done:
                        if f.cancelled():
                            continue
                        exc = f.exception()
                        if exc is not None:
                            if fatal is None:
                                fatal = exc
                                # stop sending; requests already in flight finish and are kept
                                for g in pending:
                                    g.cancel()
                            continue
                        i = futures[f]
                        out[i] = f.result()
                        if on_done:
                            on_done(i, out[i])
            except BaseException:  # Ctrl-C: stop what is in flight, or the pool's shutdown would wait for it
                for g in pending:
                    g.cancel()
                self.interrupt()
                raise
        if fatal is not None:
            raise fatal
        return out  # type: ignore[return-value]

    def interrupt(self) -> None:
        """Called on Ctrl-C while requests are in flight: end them if this backend can."""
        return None

    def close(self) -> None:
        return None


# ---------------------------------------------------------------------------------------------- openai
def is_loopback_url(url: str) -> bool:
    """Whether ``url`` names this machine (localhost, 127.0.0.0/8, ::1)."""
    import ipaddress
    from urllib.parse import urlsplit

    try:
        host = urlsplit(url).hostname or ""
    except ValueError:
        return False
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _default_warning(message: str) -> None:
    import warnings

    warnings.warn(message, UserWarning, stacklevel=4)


class OpenAIBackend(Backend):
    """An OpenAI-compatible chat-completions endpoint.

    * ``seed`` is sent with every request (servers that honour it sample reproducibly).
    * Reasoning models refuse ``max_tokens`` and take ``max_completion_tokens``: on a 400 that names
      ``max_tokens`` the request is sent once more with ``max_completion_tokens``, and the rest of the run
      uses it (the limit is the same, so the cache key does not change).
    * When the first ``fail_fast`` calls of a run all fail with the same error (a wrong parameter, a model
      that cannot serve chat), the run stops with :class:`BackendFatal` instead of making N failing calls;
      0 turns this off. Once one call has succeeded, failures are per item again.
    * A key sent over plain http to a host other than this machine is reported once through
      ``on_warning`` (default: :func:`warnings.warn`); the library never prints.
    """

    kind = "openai"

    def __init__(self, model: str, *, base_url: str, api_key: str | None = None, timeout: float = 60.0,
                 retries: int = 2, temperature: float = 0.0, max_tokens: int = 1024, seed: int | None = None,
                 system: str | None = None, jobs: int = 1, fail_fast: int = 5,
                 on_warning: Callable[[str], None] | None = None):
        super().__init__(model, jobs=jobs)
        try:
            import openai
        except ImportError as e:  # pragma: no cover - depends on the installation
            raise UsageError("the openai backend needs the 'openai' package: pip install 'paperkit-icml25[llm]'") from e
        if not model:
            raise UsageError("the openai backend needs --model NAME (the model the server serves)")
        self._openai = openai
        self.base_url = base_url
        self.temperature, self.max_tokens, self.seed, self.system = temperature, max_tokens, seed, system
        self.fail_fast = max(0, int(fail_fast))
        self.token_param = "max_tokens"
        self._state_lock = threading.Lock()
        self._succeeded = False
        self._same_failures = 0
        self._last_failure: str | None = None
        if api_key and base_url.lower().startswith("http://") and not is_loopback_url(base_url):
            (on_warning or _default_warning)(
                f"the API key is sent unencrypted to {base_url} (plain http to another machine); use https")
        # Local servers need no key; the client insists on one, so a placeholder is sent.
        self.client = openai.OpenAI(base_url=base_url, api_key=api_key or "EMPTY", timeout=timeout,
                                    max_retries=retries)

    @property
    def settings(self) -> str:
        parts = [f"temperature={self.temperature!r}", f"max_tokens={self.max_tokens}"]
        if self.seed is not None:
            parts.append(f"seed={self.seed}")
        if self.system:
            parts.append("system=" + hashlib.sha256(self.system.encode()).hexdigest()[:16])
        return " ".join(parts)

    def generate(self, prompt: str) -> str:
        try:
            text = self._generate(prompt)
        except ItemError as e:
            self._failed(str(e))
            raise
        with self._state_lock:
            self._succeeded = True
        return text

    def _failed(self, message: str) -> None:
        with self._state_lock:
            if self._succeeded or not self.fail_fast:
                return
            if message == self._last_failure:
                self._same_failures += 1
            else:
                self._last_failure, self._same_failures = message, 1
            if self._same_failures >= self.fail_fast:
                raise BackendFatal(f"the first {self._same_failures} calls to {self.base_url} all failed with the "
                                   f"same error ({message}); stopping the run")

    def _create(self, messages: list[dict[str, str]], token_param: str) -> Any:
        kwargs: dict[str, Any] = {"model": self.model, "messages": messages, "temperature": self.temperature,
                                  token_param: self.max_tokens}
        if self.seed is not None:
            kwargs["seed"] = self.seed
        return self.client.chat.completions.create(**kwargs)

    def _generate(self, prompt: str) -> str:
        oa = self._openai
        messages = ([{"role": "system", "content": self.system}] if self.system else []) + [
            {"role": "user", "content": prompt}]
        try:
            sent = self.token_param
            try:
                r = self._create(messages, sent)
            except oa.BadRequestError as e:
                # "Unsupported parameter: 'max_tokens' ... Use 'max_completion_tokens' instead." (reasoning models)
                said = str(e).lower()
                if sent != "max_tokens" or "max_tokens" not in said or not (
                        "max_completion_tokens" in said or "support" in said):
                    raise
                with self._state_lock:
                    switched, self.token_param = self.token_param == "max_tokens", "max_completion_tokens"
                if switched:
                    log.info("%s refuses max_tokens; sending max_completion_tokens for the rest of the run",
                             self.base_url)
                r = self._create(messages, "max_completion_tokens")
        except oa.APITimeoutError as e:
            raise ItemError("request timed out") from e
        except oa.APIConnectionError as e:
            raise BackendFatal(f"cannot reach the server at {self.base_url} ({_first_line(e)}); is it running?") from e
        except (oa.AuthenticationError, oa.PermissionDeniedError) as e:
            raise BackendFatal(f"HTTP {e.status_code} from {self.base_url}: not authorised ({_first_line(e)}); "
                               "pass the key's variable with --api-key-env") from e
        except oa.NotFoundError as e:
            raise BackendFatal(f"HTTP 404 from {self.base_url}: model {self.model!r} or the chat endpoint was not "
                               f"found ({_first_line(e)})") from e
        except oa.APIStatusError as e:
            raise ItemError(f"HTTP {e.status_code}: {_first_line(e)}") from e
        except (oa.APIError, ValueError, TypeError, KeyError) as e:
            raise ItemError(f"malformed response: {_first_line(e)}") from e
        try:
            content = r.choices[0].message.content
        except (AttributeError, IndexError, TypeError):
            content = None
        if not isinstance(content, str):
            raise ItemError("malformed response: no message content")
        return content

    def close(self) -> None:
        self.client.close()


def _first_line(e: BaseException) -> str:
    s = str(e).strip().splitlines()
    return (s[0] if s else type(e).__name__)[:200]


# ----------------------------------------------------------------------------------------------- shell
_SHELL_OPERATORS = set("();<>|&")


def shell_syntax(command: str) -> list[str]:
    """The shell syntax in ``command`` that the shell backend passes to the program as plain arguments
    (it splits like a shell but runs without one): unquoted operators (``| > < ; & ( )``), ``$`` (no
    variable or command substitution), backticks and a leading ``~`` (no home expansion). Quoted text
    (``'a|b'``) is an argument on purpose and is not reported."""
    try:
        lex = shlex.shlex(command, posix=False, punctuation_chars=True)
        lex.whitespace_split = True
        tokens = list(lex)
    except ValueError:  # unbalanced quotes: shlex.split reports it when the backend is built
        return []
    found: list[str] = []

    def add(x: str) -> None:
        if x not in found:
            found.append(x)

    for tok in tokens:
        if tok[:1] == "'":
            continue  # single quotes: literal text
        if tok and set(tok) <= _SHELL_OPERATORS:
            add(tok)
            continue
        if "$" in tok:
            add("$")
        if "`" in tok:
            add("`")
        if tok.startswith("~") and tok[:1] != '"':
            add("~")
    return found


def shell_syntax_warning(command: str | None) -> str | None:
    """A one-line warning when ``--cmd`` holds shell syntax that will not be interpreted (else None)."""
    found = shell_syntax(command or "")
    if not found:
        return None
    return (f"--cmd {command!r} contains shell syntax ({' '.join(found)}) that is passed to the program as plain "
            "arguments: the command runs without a shell, so nothing is piped, redirected or expanded; put the "
            "pipeline in a script, or use --cmd \"sh -c '...'\"")


class ShellBackend(Backend):
    kind = "shell"

    def __init__(self, command: str | Sequence[str], *, timeout: float = 60.0, jobs: int = 1, model: str | None = None):
        argv = shlex.split(command) if isinstance(command, str) else list(command)
        if not argv:
            raise UsageError("the shell backend needs --cmd 'PROGRAM ARGS...'")
        _check_program(argv[0])
        self.argv = argv
        self.timeout = timeout
        self._live: set[subprocess.Popen] = set()
        self._live_lock = threading.Lock()
        super().__init__(model or "shell:" + shlex.join(argv), jobs=jobs)

    def generate(self, prompt: str) -> str:
        # The program runs in its own process group, and a timeout or an interrupt ends the whole group: a
        # wrapper script's children (sh -c '...; python model.py') would otherwise keep running, one per
        # timed-out prompt, after subprocess.run had killed only the wrapper.
        try:
            # a program may print any bytes: undecodable ones become U+FFFD (the answer is then scored as
            # text), never an exception that ends the run
            proc = subprocess.Popen(self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    text=True, encoding="utf-8", errors="replace", start_new_session=True)
        except FileNotFoundError as e:
            raise BackendFatal(f"--cmd: program {self.argv[0]!r} not found") from e
        except PermissionError as e:
            raise BackendFatal(f"--cmd: program {self.argv[0]!r} is not executable") from e
        with self._live_lock:
            self._live.add(proc)
        try:
            out, err = proc.communicate(prompt, timeout=self.timeout)
        except subprocess.TimeoutExpired as e:
            _kill_group(proc)
            proc.communicate()
            raise ItemError(f"timed out after {self.timeout:g}s") from e
        except BaseException:  # Ctrl-C reaches only the terminal's process group, not this one
            _kill_group(proc)
            proc.wait()
            raise
        finally:
            with self._live_lock:
                self._live.discard(proc)
        if proc.returncode != 0:
            tail = " ".join((err or "").split())[-200:]
            raise ItemError(f"exit status {proc.returncode}" + (f": {tail}" if tail else ""))
        return out.strip()

    def interrupt(self) -> None:
        """End every program still running (the threads waiting on them then return at once)."""
        with self._live_lock:
            live = list(self._live)
        for proc in live:
            _kill_group(proc)


def _check_program(program: str) -> None:
    """Refuse a --cmd program that cannot be run, before a run dir exists (the same search as Popen: a
    name without a slash is looked up on PATH, a path must be an executable file)."""
    if shutil.which(program) is not None:
        return
    if os.sep in program and os.path.isfile(program):
        raise UsageError(f"--cmd: program {program!r} is not executable")
    raise UsageError(f"--cmd: program {program!r} not found" + ("" if os.sep in program else " on PATH"))


def _kill_group(proc: subprocess.Popen) -> None:
    """SIGKILL ``proc``'s process group (it leads one: start_new_session)."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        with contextlib.suppress(ProcessLookupError):
            proc.kill()


# -------------------------------------------------------------------------------------------------- hf
DTYPES = ("auto", "float32", "bfloat16", "float16")


class HFBackend(Backend):
    """A local causal LM folder. ``dtype``: ``float32``/``bfloat16``/``float16``, ``auto`` (the dtype in
    the model's config), or None (float32 on CPU, ``auto`` on CUDA). The dtype actually loaded and a hash
    of the chat template are part of :attr:`settings`, so answers from another precision or template
    (another transformers version, an edited tokenizer) never replay as these."""

    kind = "hf"

    def __init__(self, model_path: str, *, max_new_tokens: int = 256, batch_size: int = 8, device: str = "auto",
                 seed: int = 0, model: str | None = None, dtype: str | None = None):
        path = Path(model_path)
        if not path.is_dir():
            raise InputError(f"{model_path}: no such model directory; expected a local Hugging Face model folder")
        if dtype is not None and dtype not in DTYPES:
            raise UsageError(f"--dtype {dtype!r} is unknown; expected one of {', '.join(DTYPES)}")
        try:
            import torch
            import transformers
            from transformers import AutoModelForCausalLM, AutoTokenizer
        except ImportError as e:  # pragma: no cover
            raise UsageError("the hf backend needs transformers: pip install 'paperkit-icml25[hf]'") from e
        from paperkit.core.devices import resolve_device

        device = str(resolve_device(device))  # cuda without a GPU: one-line error before the model loads
        if dtype is None:
            dtype = "float32" if device == "cpu" else "auto"
        wanted = dtype if dtype == "auto" else getattr(torch, dtype)
        # transformers >= 4.56 spells it dtype (torch_dtype is deprecated); older versions only know torch_dtype
        major, minor = (int(x) for x in re.findall(r"\d+", transformers.__version__)[:2])
        dtype_kw = "dtype" if (major, minor) >= (4, 56) else "torch_dtype"
        try:
            self.tok = AutoTokenizer.from_pretrained(path, local_files_only=True)
            self.lm = AutoModelForCausalLM.from_pretrained(path, local_files_only=True, **{dtype_kw: wanted})
        except (OSError, ValueError) as e:
            raise InputError(f"{model_path}: cannot load a causal LM and tokenizer ({_first_line(e)})") from e
        if wanted != "auto" and self.lm.dtype != wanted:
            self.lm = self.lm.to(wanted)
        self.lm = self.lm.to(device).eval()
        if self.tok.pad_token is None:
            self.tok.pad_token = self.tok.eos_token if self.tok.eos_token is not None else self.tok.unk_token
        self.tok.padding_side = "left"
        self.device, self.max_new_tokens, self.batch_size, self.seed = device, max_new_tokens, max(1, batch_size), seed
        self.dtype = str(self.lm.dtype).removeprefix("torch.")
        template = getattr(self.tok, "chat_template", None)
        if template is not None and not isinstance(template, str):  # several named templates
            template = repr(sorted(dict(template).items()))
        self.template_hash = hashlib.sha256(template.encode()).hexdigest()[:16] if template else "none"
        self._torch = torch
        self._lock = threading.Lock()
        super().__init__(model or "hf:" + path.resolve().name, jobs=1)

    @property
    def settings(self) -> str:
        return f"greedy max_new_tokens={self.max_new_tokens} dtype={self.dtype} chat_template={self.template_hash}"

    def _ids(self, prompt: str) -> list[int]:
        """Token ids of one prompt, tokenised once: through the chat template when there is one (which
        places any BOS itself), else with the tokenizer's own special tokens."""
        if self.template_hash != "none":
            ids = self.tok.apply_chat_template([{"role": "user", "content": prompt}], tokenize=True,
                                               add_generation_prompt=True, return_dict=False)
            if hasattr(ids, "keys"):  # a BatchEncoding on versions that ignore return_dict=False
                ids = ids["input_ids"]
            return list(ids)
        return list(self.tok(prompt)["input_ids"])

    def encode(self, prompts: Sequence[str]) -> Any:
        """The left-padded batch (input_ids, attention_mask) that :meth:`complete` generates from."""
        return self.tok.pad({"input_ids": [self._ids(p) for p in prompts]}, padding=True, return_tensors="pt")

    def complete(self, prompts: Sequence[str], on_done: OnDone | None = None) -> list[Completion]:
        torch = self._torch
        out: list[Completion] = []
        with self._lock:
            for start in range(0, len(prompts), self.batch_size):
                chunk = prompts[start:start + self.batch_size]
                try:
                    enc = self.encode(chunk).to(self.device)
                    torch.manual_seed(self.seed)
                    with torch.no_grad():
                        gen = self.lm.generate(**enc, max_new_tokens=self.max_new_tokens, do_sample=False,
                                               pad_token_id=self.tok.pad_token_id)
                    texts = self.tok.batch_decode(gen[:, enc["input_ids"].shape[1]:], skip_special_tokens=True)
                    results = [Completion(t) if t.strip() else Completion(None, "empty response") for t in texts]
                except (RuntimeError, ValueError) as e:
                    results = [Completion(None, f"generation failed: {_first_line(e)}")] * len(chunk)
                for j, c in enumerate(results):
                    out.append(c)
                    if on_done:
                        on_done(start + j, c)
        return out

    def generate(self, prompt: str) -> str:
        c = self.complete([prompt])[0]
        if c.text is None:
            raise ItemError(c.error or "generation failed")
        return c.text


# ------------------------------------------------------------------------------------------------ rule
def parse_failures(spec: str | None) -> dict[str, float]:
    """``"distracted:0.5,literal"`` → ``{"distracted": 0.5, "literal": 1.0}``."""
    out: dict[str, float] = {}
    for part in (spec or "").split(","):
        part = part.strip()
        if not part or part == "none":
            continue
        name, _, rate = part.partition(":")
        name = name.strip().replace("-", "_")
        if name not in solver.FAILURE_MODES + ("memorise",):
            raise UsageError(f"--failures: unknown mode {name!r}; expected some of "
                             f"{', '.join(solver.FAILURE_MODES + ('memorise',))} (each optionally ':RATE')")
        try:
            r = float(rate) if rate else 1.0
        except ValueError:
            raise UsageError(f"--failures: rate {rate!r} of {name!r} is not a number") from None
        if not 0.0 <= r <= 1.0:
            raise UsageError(f"--failures: rate {r} of {name!r} is outside [0, 1]")
        out[name] = r
    return out


_WORD = re.compile(r"[a-z0-9$%.,']+")


def _tokens(text: str) -> frozenset[str]:
    return frozenset(t.strip(".,?!'\"") for t in _WORD.findall(text.lower()))


class RuleBackend(Backend):
    """The rule solver as a model under test; ``failures`` maps a failure mode to the share of prompts
    (chosen by a seeded hash of the prompt) on which it is active."""

    kind = "rule"

    def __init__(self, *, template: str = "{inquiry}", failures: dict[str, float] | None = None, seed: int = 0,
                 memory: Sequence[tuple[str, str]] = (), similarity: float = 0.5, model: str | None = None):
        self.failures = dict(failures or {})
        if "memorise" in self.failures and not memory:
            raise UsageError("the memorise failure mode needs the original problems (dimension-0 rows)")
        self.seed = seed
        self.prefix, _, self.suffix = template.partition("{inquiry}")
        self.memory = [(_tokens(q), a) for q, a in memory]
        self.similarity = similarity
        spec = ",".join(f"{k}:{v:g}" if v < 1 else k for k, v in sorted(self.failures.items()))
        super().__init__(model or ("rule" + (f"[{spec}]" if spec else "")), jobs=1)

    @property
    def settings(self) -> str:
        return f"seed={self.seed}" if any(0 < r < 1 for r in self.failures.values()) else ""

    def _active(self, mode: str, text: str) -> bool:
        rate = self.failures.get(mode, 0.0)
        if rate >= 1.0:
            return True
        if rate <= 0.0:
            return False
        h = hashlib.sha256(f"{self.seed}\x00{mode}\x00{text}".encode()).digest()
        return int.from_bytes(h[:8], "little") / 2**64 < rate

    def inquiry_of(self, prompt: str) -> str:
        if prompt.startswith(self.prefix) and prompt.endswith(self.suffix):
            return prompt[len(self.prefix):len(prompt) - len(self.suffix)] if self.suffix else prompt[len(self.prefix):]
        return prompt

    def generate(self, prompt: str) -> str:
        text = self.inquiry_of(prompt)
        if self._active("memorise", text):
            toks = _tokens(text)
            best, answer = 0.0, None
            for mem, a in self.memory:
                sim = len(toks & mem) / max(1, len(toks | mem))
                if sim > best:
                    best, answer = sim, a
            if answer is not None and best >= self.similarity:
                return f"I have seen this one. #### {answer}"
            return "I do not recognise this problem, so I cannot say."
        modes = [m for m in solver.FAILURE_MODES if self._active(m, text)]
        return solver.solve(text, modes)


# ------------------------------------------------------------------------------------- cache + replay
class CachedBackend:
    """Serves cached answers and sends only the misses to ``inner`` (None = replay: misses fail)."""

    def __init__(self, inner: Backend | None, cache: ResponseCache, *, model: str | None = None,
                 settings: str | None = None):
        self.inner, self.cache = inner, cache
        if inner is not None:
            self.model, self.settings = inner.model, inner.settings
        else:
            self.model, self.settings = _replay_identity(cache, model, settings)
        self.kind = inner.kind if inner is not None else "replay"
        self.jobs = inner.jobs if inner is not None else 1
        self.misses = 0
        self._keys: dict[str, str] = {}

    def key(self, prompt: str) -> str:
        k = self._keys.get(prompt)
        if k is None:
            k = self._keys[prompt] = cache_key(self.model, self.settings, prompt)
        return k

    def complete(self, prompts: Sequence[str], on_done: OnDone | None = None) -> list[Completion]:
        out: list[Completion | None] = [None] * len(prompts)
        todo: list[int] = []
        for i, p in enumerate(prompts):
            hit = self.cache.get(self.key(p))
            if hit is not None:
                out[i] = Completion(hit)
                if on_done:
                    on_done(i, out[i])
            else:
                todo.append(i)
        self.misses += len(todo)
        if not todo:
            return out  # type: ignore[return-value]
        if self.inner is None:
            for i in todo:
                out[i] = Completion(None, "replay: no cached response for this prompt")
                if on_done:
                    on_done(i, out[i])
            return out  # type: ignore[return-value]

        def done(j: int, c: Completion) -> None:
            i = todo[j]
            if c.text is not None:
                self.cache.put(self.key(prompts[i]), self.model, self.settings, prompts[i], c.text)
            out[i] = c
            if on_done:
                on_done(i, c)

        try:
            self.inner.complete([prompts[i] for i in todo], on_done=done)
        finally:
            self.cache.sync()
        return out  # type: ignore[return-value]

    def close(self) -> None:
        if self.inner is not None:
            self.inner.close()


def _replay_identity(cache: ResponseCache, model: str | None, settings: str | None) -> tuple[str, str]:
    pairs = cache.models()
    if model is not None:
        pairs = [p for p in pairs if p[0] == model]
    if settings is not None:
        pairs = [p for p in pairs if p[1] == settings]
    if len(pairs) == 1:
        return pairs[0]
    shown = "; ".join(f"{m!r} ({s or 'no settings'})" for m, s in cache.models()) or "none"
    if not pairs:
        raise UsageError(f"{cache.path}: holds no responses for model {model!r}; it holds: {shown}")
    raise UsageError(f"{cache.path}: holds several models/settings ({shown}); choose one with --model")


# --------------------------------------------------------------------------------------------- factory
BACKENDS = ("openai", "shell", "hf", "rule", "replay")


def make_backend(kind: str, *, model: str | None = None, base_url: str | None = None,
                 api_key_env: str | None = None, cmd: str | None = None, timeout: float = 60.0, retries: int = 2,
                 max_tokens: int = 1024, temperature: float = 0.0, jobs: int = 1, failures: str | None = None,
                 seed: int = 0, template: str = "{inquiry}", memory: Sequence[tuple[str, str]] = (),
                 device: str = "auto", dtype: str | None = None,
                 on_warning: Callable[[str], None] | None = None) -> Backend | None:
    """A backend by name (None for ``replay``, which answers from the cache alone); wrap it with
    :func:`with_cache`.

    ``model`` is the served model's name (openai), the local model folder (hf), or a name for the answers
    in the cache (shell, rule). ``api_key_env`` names the environment variable holding the API key (the
    key itself is never put in settings, logs or files); a named variable that is unset or empty is a
    usage error. ``on_warning`` receives warnings meant for the user (default: :func:`warnings.warn`).
    """
    import os

    if kind not in BACKENDS:
        raise UsageError(f"--backend {kind!r} is unknown; expected one of {', '.join(BACKENDS)}")
    if kind == "replay":
        return None
    if kind == "openai":
        key = None
        if api_key_env:
            key = os.environ.get(api_key_env)
            if not key:
                raise UsageError(f"--api-key-env: environment variable {api_key_env} is not set or empty")
        if not base_url:
            raise UsageError("the openai backend needs --base-url (e.g. http://127.0.0.1:8000/v1)")
        return OpenAIBackend(model or "", base_url=base_url, api_key=key, timeout=timeout, retries=retries,
                             temperature=temperature, max_tokens=max_tokens, seed=seed, jobs=jobs,
                             on_warning=on_warning)
    if kind == "shell":
        if not cmd:
            raise UsageError("the shell backend needs --cmd 'PROGRAM ARGS...'")
        return ShellBackend(cmd, timeout=timeout, jobs=jobs, model=model)
    if kind == "hf":
        if not model:
            raise UsageError("the hf backend needs --model PATH (a local Hugging Face model folder)")
        return HFBackend(model, max_new_tokens=max_tokens, device=device, seed=seed, dtype=dtype)
    return RuleBackend(template=template, failures=parse_failures(failures), seed=seed, memory=memory, model=model)


def with_cache(inner: Backend | None, cache_path: str | Path | None, *, model: str | None = None) -> CachedBackend:
    """``inner`` behind the response cache at ``cache_path`` (replay when ``inner`` is None)."""
    if inner is None:
        return CachedBackend(None, ResponseCache(cache_path, must_exist=True), model=model)
    return CachedBackend(inner, ResponseCache(cache_path))
