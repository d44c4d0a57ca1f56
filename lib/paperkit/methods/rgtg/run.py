"""Orchestration of the rgtg commands: settings (the single source of defaults), prepare (read and validate every
input before a run dir exists), execute (stages through ``run.cached``)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from paperkit.core.devices import resolve_device
from paperkit.core.errors import InputError, UsageError
from paperkit.core.progress import progress as default_progress

from . import decode, evaluate, lmfit, rm, store, toy
from .model import TinyLM, init_scale, param_count

LOSSES = rm.LOSSES


# ---------------------------------------------------------------------------------------------- toy
@dataclass(frozen=True)
class ToySettings:
    vocab: int = 20
    length: int = 12
    prompt_len: int = 2
    min_len: int | None = None  # None: every pair and rollout is --length tokens long
    pairs: int = 4000
    heldout: int = 800
    prompts: int = 200
    val_prompts: int = 200
    beta: float = 3.0
    seed: int = 0


@dataclass
class ToyInputs:
    settings: ToySettings
    lm: store.Loaded | None  # a trained pi_ref (rgtg-train-lm's lm.pt) instead of a new Markov chain
    lm_path: str | None = None


def prepare_toy(s: ToySettings, lm_path=None) -> ToyInputs:
    if not 2 <= s.prompt_len < s.length:
        raise UsageError(f"--prompt-len {s.prompt_len}: expected 2 <= prompt-len < --length {s.length}")
    if s.min_len is not None and not s.prompt_len < s.min_len <= s.length:
        raise UsageError(f"--min-len {s.min_len}: expected --prompt-len < min-len <= --length")
    lm = None
    if lm_path is not None:
        lm = store.load_lm(lm_path)
        if lm.kind != "tiny":
            raise UsageError(f"--lm {lm_path}: expected an LM.pt from rgtg-train-lm (a {lm.kind} LM is not "
                             "sampled here; without --lm rgtg-toy draws its own Markov pi_ref)")
        limit = lm.meta["config"]["max_len"]
        if s.length > limit:
            raise UsageError(f"--length {s.length} is over the {limit} positions of {lm_path}")
    return ToyInputs(s, lm, lm_path)


def toy_vocab(n: int) -> store.WordVocab:
    return store.WordVocab([f"t{i}" for i in range(n)])


def execute_toy(inputs: ToyInputs, run: Any) -> dict[str, Any]:
    """The task dir: lm.pt (Markov pi_ref, or a copy of the given LM), reward.json, pairs/heldout (prompt, chosen,
    rejected), prefixes and rollouts (prompt, response[, reward]), prompts and val_prompts."""
    import shutil

    from paperkit.core import io

    s = inputs.settings
    rng = np.random.default_rng(s.seed)
    if inputs.lm is None:
        task = toy.make_task(s.vocab, s.length, s.seed)
        vocab, sampler = toy_vocab(s.vocab), None
        store.save_markov_lm(run.file("lm.pt"), task.log_trans, task.log_init, vocab)
    else:
        vocab, size = inputs.lm.vocab, inputs.lm.vocab_size
        lexicon, bigram = toy.random_reward(size, rng)
        task = toy.ToyTask(np.zeros((size, size)), np.zeros(size), lexicon, bigram, s.length)
        sampler = toy.lm_sampler(inputs.lm.module, size)
        shutil.copyfile(inputs.lm_path, run.file("lm.pt"))
    cut = s.prompt_len

    def pair_rows(n):
        ch, rj = toy.preference_pairs(task, n, rng, prompt_len=cut, beta=s.beta, min_len=s.min_len, sampler=sampler)
        return [{"prompt": vocab.decode(c[:cut]), "chosen": vocab.decode(c[cut:]), "rejected": vocab.decode(r[cut:])}
                for c, r in zip(ch, rj, strict=True)]

    def seq_rows(n, with_reward):
        seqs, rewards = toy.rollouts(task, n, rng, min_len=s.min_len, sampler=sampler)
        return [{"prompt": vocab.decode(q[:cut]), "response": vocab.decode(q[cut:]),
                 **({"reward": float(v)} if with_reward else {})} for q, v in zip(seqs, rewards, strict=True)]

    files = {"pairs.jsonl": pair_rows(s.pairs), "heldout.jsonl": pair_rows(s.heldout),
             "prefixes.jsonl": seq_rows(s.pairs, False), "rollouts.jsonl": seq_rows(s.pairs, True),
             "prompts.jsonl": [{"prompt": vocab.decode(p)} for p in
                               toy.sample(task, s.prompts, cut, rng, sampler=sampler).tolist()]}
    # drawn last, so the files above do not depend on it: validation prompts for picking w (rgtg-generate)
    files["val_prompts.jsonl"] = [{"prompt": vocab.decode(p)} for p in
                                  toy.sample(task, s.val_prompts, cut, rng, sampler=sampler).tolist()]
    io.write_json(run.file("reward.json"), {
        "kind": "toy-lexicon-bigram", "vocab": vocab.tokens, "length": s.length,
        "lexicon": task.lexicon.tolist(),
        "bigrams": [[int(a), int(b)] for a, b in zip(*np.nonzero(task.bigram), strict=True)]})
    for name, rows in files.items():
        io.write_jsonl(run.file(name), rows)
    return {"vocab": len(vocab), "length": s.length, **{k.split(".")[0]: len(v) for k, v in files.items()},
            "lexicon_tokens": [vocab.tokens[i] for i in np.nonzero(task.lexicon)[0]]}


def task_from_files(lm: store.Loaded, reward: dict, length: int) -> toy.ToyTask:
    """The toy task (for true rewards and the DP optimum) from lm.pt + reward.json."""
    v = len(reward["vocab"])
    bigram = np.zeros((v, v))
    for a, b in reward["bigrams"]:
        bigram[a, b] = 1.0
    log_trans = lm.meta["log_trans"].numpy() if lm.kind == "markov" else np.zeros((v, v))
    return toy.ToyTask(log_trans, np.zeros(v), np.asarray(reward["lexicon"], float), bigram, length)


# ----------------------------------------------------------------------------------------- train-lm
@dataclass(frozen=True)
class TrainLmSettings:
    epochs: int = 8
    lr: float = 3e-3
    batch_size: int = 32
    block: int = 64
    val_fraction: float = 0.1
    d_model: int = 64
    layers: int = 2
    heads: int = 4
    seed: int = 0
    device: str = "auto"


@dataclass
class TrainLmInputs:
    settings: TrainLmSettings
    vocab: store.WordVocab
    train: rm.Seqs
    val: rm.Seqs
    source: dict
    paths: list
    device: Any = "cpu"


def prepare_train_lm(s: TrainLmSettings, *, text=None, corpus=None, samples=None, vocab_from=None) -> TrainLmInputs:
    """A character LM on ``text`` (a UTF-8 file) or the shipped ``corpus``, or a word LM on ``samples`` (JSONL
    prompt/response rows, the vocabulary of ``vocab_from``); the last ``val_fraction`` is held out."""
    if sum(x is not None for x in (text, corpus, samples)) != 1:
        raise UsageError("give exactly one of --text FILE, --corpus shakespeare, --samples JSONL")
    if s.d_model % s.heads:
        raise UsageError(f"--d-model {s.d_model} is not a multiple of --heads {s.heads}")
    if not 0 < s.val_fraction < 1:
        raise UsageError(f"--val-fraction {s.val_fraction}: expected a number in (0, 1)")
    if samples is not None:
        if vocab_from is None:
            raise UsageError("--samples needs --vocab-from LM.pt (rgtg-toy's lm.pt): the LM must share the RM's "
                             "vocabulary")
        vocab = store.load_lm(vocab_from).vocab
        if not isinstance(vocab, store.WordVocab):
            raise UsageError(f"--vocab-from {vocab_from}: expected an LM.pt (an HF directory has its own tokenizer)")
        seqs = store.read_sequences(samples, vocab)[0]
        cut = max(1, int(round(len(seqs) * (1 - s.val_fraction))))
        if cut >= len(seqs):
            raise InputError(f"{samples}: {len(seqs)} rows leave none for validation; give more rows")
        train, val = seqs[torch.arange(cut)], seqs[torch.arange(cut, len(seqs))]
        source = {"samples": str(samples), "rows": len(seqs)}
    else:
        if corpus is not None:
            meta = store.builtin_text(corpus)
            body, source = meta["text"], {"corpus": corpus, "licence": meta["licence"], "source": meta["source"]}
        else:
            body, source = store.read_text(text), {"text": str(text)}
        vocab = store.CharVocab(sorted(set(body)))
        ids = vocab.encode(body, "text")
        cut = int(len(ids) * (1 - s.val_fraction))
        if cut < s.block + 1 or len(ids) - cut < 2:
            raise InputError(f"{text or corpus}: {len(ids)} characters are too few for --block {s.block} and "
                             f"--val-fraction {s.val_fraction}")
        train, val = lmfit.text_windows(ids[:cut], s.block), lmfit.text_windows(ids[cut:], s.block)
        source["characters"] = len(ids)
    longest = int(max(train.lengths.max(), val.lengths.max()))
    from paperkit.core.resources import check_memory

    params = s.layers * 12 * s.d_model ** 2 + 2 * (len(vocab) + longest) * s.d_model
    check_memory(16 * params + 4 * s.batch_size * longest * (len(vocab) + 16 * s.d_model),
                 f"an LM with --d-model {s.d_model} and --layers {s.layers}")
    return TrainLmInputs(s, vocab, train, val, source,
                         [p for p in (text, samples, vocab_from) if p is not None], resolve_device(s.device))


def execute_train_lm(inputs: TrainLmInputs, run: Any, progress: Any = default_progress) -> dict[str, Any]:
    s, dev = inputs.settings, inputs.device
    max_len = max(64, int(max(inputs.train.lengths.max(), inputs.val.lengths.max())) * 2)

    def build():
        torch.manual_seed(s.seed)
        net = TinyLM(len(inputs.vocab), d=s.d_model, layers=s.layers, heads=s.heads, max_len=max_len)
        init_scale(net)
        return net

    def compute():
        net, history = build().to(dev), []
        with progress(total=s.epochs, desc="train LM", unit="epoch") as bar:
            lmfit.train_lm(net, inputs.train.to(dev), epochs=s.epochs, lr=s.lr, batch=s.batch_size, seed=s.seed,
                           val=inputs.val.to(dev), history=history, on_epoch=lambda _: bar.update(1))
        return {"state": {k: v.cpu() for k, v in net.state_dict().items()}, "history": history}

    out = run.cached("lm", compute, fmt="pt")
    net = build()
    net.load_state_dict(out["state"])
    net.eval()
    val = lmfit.mean_loss(net, inputs.val, s.batch_size)
    metrics = {**inputs.source, "vocab": len(inputs.vocab), "vocab_kind": inputs.vocab.kind,
               "train_sequences": len(inputs.train), "val_sequences": len(inputs.val),
               "val_loss_nats": val, "val_bits_per_token": val / math.log(2), "parameters": param_count(net)}
    rows = [{"step": i, "epoch": ep, "split": split, "loss": v} for i, (ep, split, v) in enumerate(out["history"])]
    return {"net": net, "metrics": metrics, "loss_rows": rows}


# ----------------------------------------------------------------------------------------- train-rm
@dataclass(frozen=True)
class TrainRmSettings:
    loss: str = "farma"
    iters: int = 7
    lr: float = 2e-3
    batch_size: int = 64
    min_prefix: int = 4
    constraint_weight: float = 1.0
    constraint_target: str = "joint"
    d_model: int = 32
    layers: int = 1
    heads: int = 4
    seed: int = 0
    device: str = "auto"


@dataclass
class TrainRmInputs:
    settings: TrainRmSettings
    lm: store.Loaded
    chosen: rm.Seqs
    rejected: rm.Seqs
    held_chosen: rm.Seqs | None
    held_rejected: rm.Seqs | None
    prefixes: rm.Seqs | None
    rollouts: rm.Seqs | None
    rewards: np.ndarray | None
    paths: list = field(default_factory=list)
    device: Any = "cpu"


def prepare_train_rm(s: TrainRmSettings, *, lm_path, pairs, heldout=None, prefixes=None, rollouts=None) -> TrainRmInputs:
    if s.loss not in LOSSES:
        raise UsageError(f"--loss {s.loss!r}; expected one of {', '.join(LOSSES)}")
    if s.d_model % s.heads:
        raise UsageError(f"--d-model {s.d_model} is not a multiple of --heads {s.heads}")
    from paperkit.core.resources import check_memory

    # weights, gradients and two AdamW moments in float32
    params = s.layers * 12 * s.d_model ** 2 + 2 * 4096 * s.d_model
    check_memory(16 * params, f"an RM with --d-model {s.d_model} and --layers {s.layers}", flag="smaller --d-model")
    if s.loss == "cd-regress" and rollouts is None:
        raise UsageError("--loss cd-regress regresses prefix scores on pi_ref rollouts: give --rollouts FILE")
    lm = store.load_lm(lm_path)
    if not isinstance(lm.vocab, store.WordVocab):
        raise UsageError(f"--lm {lm_path}: our RM trainer uses the vocabulary of an LM.pt; an HF directory RM is "
                         "used as given by rgtg-generate --rm DIR")
    ch, rj = store.read_pairs(pairs, lm.vocab)
    hc = hr = None
    if heldout is not None:
        hc, hr = store.read_pairs(heldout, lm.vocab)
    pre = store.read_sequences(prefixes, lm.vocab)[0] if prefixes is not None else ch
    ro, rw = store.read_sequences(rollouts, lm.vocab, reward=True) if rollouts is not None else (None, None)
    longest = max(int(x.lengths.max()) for x in (ch, rj, pre, ro) if x is not None)
    if longest > 4096:
        raise InputError(f"{pairs}: a sequence has {longest} tokens; our RM's positions stop at 4096")
    _check_min_prefix(s, [(prefixes or pairs, pre.lengths) if s.loss == "farma" else None,
                          # a pair's prefixes are scored up to its shorter response
                          (pairs, torch.minimum(ch.lengths, rj.lengths)) if s.loss == "bt-prefix" else None,
                          (rollouts, ro.lengths) if s.loss == "cd-regress" else None,
                          (heldout, hc.lengths) if hc is not None and s.loss != "seq" else None])
    return TrainRmInputs(s, lm, ch, rj, hc, hr, pre, ro, rw,
                         [p for p in (lm_path, pairs, heldout, prefixes, rollouts) if p is not None],
                         resolve_device(s.device))


def _check_min_prefix(s: TrainRmSettings, used) -> None:
    """The prefix losses and the held-out constraint gap score only prefixes of >= --min-prefix tokens: a file
    with none would train nothing and report a gap of 0 (a perfectly met constraint) instead of no measurement.
    ``used``: (path, sequence lengths) of each file --min-prefix applies to, None where it does not."""
    for path, lengths in filter(None, used):
        longest = int(lengths.max())
        if s.min_prefix > longest:
            raise UsageError(f"--min-prefix {s.min_prefix} is longer than every sequence of {path} (longest "
                             f"{longest} tokens, prompt included); give --min-prefix {longest} or less")


def build_rm(s: TrainRmSettings, vocab: int, max_len: int):
    torch.manual_seed(s.seed)
    net = TinyLM(vocab, d=s.d_model, layers=s.layers, heads=s.heads, max_len=max_len)
    init_scale(net)
    return rm.ScalarRM(net) if s.loss == "seq" else net


def execute_train_rm(inputs: TrainRmInputs, run: Any, progress: Any = default_progress) -> dict[str, Any]:
    s = inputs.settings
    vocab = inputs.lm.vocab_size
    longest = max(int(x.lengths.max()) for x in (inputs.chosen, inputs.rejected, inputs.prefixes, inputs.rollouts)
                  if x is not None)
    max_len = max(64, 2 * longest)

    dev = inputs.device
    on_dev = lambda x: None if x is None else x.to(dev)  # noqa: E731

    held = on_dev(inputs.held_chosen)

    def compute():
        net = build_rm(s, vocab, max_len).to(dev)
        history, after_max = [], {}

        def on_phase(it, name):  # the held-out constraint gap right after the last max epoch (RM_Max checkpoint)
            if name == "max" and it == s.iters - 2 and held is not None:
                after_max["gap"] = rm.constraint_gap(net, held, s.min_prefix)

        with progress(total=s.iters, desc=f"train RM ({s.loss})", unit="iter") as bar:
            rm.train_rm(net, loss=s.loss, iters=s.iters, lr=s.lr, batch=s.batch_size, min_prefix=s.min_prefix,
                        seed=s.seed, chosen=on_dev(inputs.chosen), rejected=on_dev(inputs.rejected),
                        prefixes=on_dev(inputs.prefixes), rollouts=on_dev(inputs.rollouts),
                        rewards=None if inputs.rewards is None else torch.tensor(inputs.rewards, dtype=torch.float32, device=dev),
                        constraint_weight=s.constraint_weight, constraint_target=s.constraint_target,
                        history=history, on_iter=lambda _: bar.update(1), on_phase=on_phase)
        return {"state": {k: v.cpu() for k, v in net.state_dict().items()}, "history": history, **after_max}

    out = run.cached("rm", compute, fmt="pt")
    net = build_rm(s, vocab, max_len)
    net.load_state_dict(out["state"])
    net.eval()
    metrics = {"loss": s.loss, "head": "scalar" if s.loss == "seq" else "token", "train_pairs": len(inputs.chosen)}
    if inputs.held_chosen is not None:
        metrics["heldout_pairs"] = len(inputs.held_chosen)
        metrics["pair_accuracy"] = rm.pair_accuracy(net, inputs.held_chosen, inputs.held_rejected)
        if s.loss != "seq":
            metrics["constraint_gap"] = rm.constraint_gap(net, inputs.held_chosen, s.min_prefix)
        if "gap" in out:
            metrics["constraint_gap_after_max"] = out["gap"]
    rows = [{"step": i, "iter": it, "phase": name, "loss": v} for i, (it, name, v) in enumerate(out["history"])]
    return {"net": net, "metrics": metrics, "loss_rows": rows}


# ----------------------------------------------------------------------------------------- generate
@dataclass(frozen=True)
class GenerateSettings:
    methods: tuple[str, ...] = ("ref", "farma")
    k: int = 10
    w: float = 1.0
    w_grid: tuple[float, ...] = (1.0, 2.0, 5.0, 10.0, 20.0, 50.0)  # searched on --val-prompts
    max_new: int = 10
    decode: str = "sample"
    n: int = 10
    samples: int = 2
    score_impl: str = "batched"
    batch_size: int = 64
    seed: int = 0
    device: str = "auto"


@dataclass
class MethodSpec:
    name: str
    rm: store.Loaded | None
    rm_path: str | None


@dataclass
class GenerateInputs:
    settings: GenerateSettings
    lm: store.Loaded
    methods: list[MethodSpec]
    prompts: list[list[int]]
    scorer: store.Loaded | None
    true_reward: dict | None
    paths: list
    device: Any = "cpu"
    val_prompts: list[list[int]] | None = None  # pick each guided method's w on these (by mean score)


W_METHODS = decode.ONE_CALL + decode.K_CALLS  # the methods whose decoding uses w
# |w| bound: at 1000 the RM already outweighs any LM logit; far larger w overflows LM logit + w r to inf/NaN
# (in float32 near 1e36, in a half-precision model's scores near 1e4 x r) and sampling has no distribution
W_MAX = 1e3


def parse_methods(items) -> list[tuple[str, str | None]]:
    """``NAME`` or ``NAME=RM_PATH`` (that method's own RM); names unique."""
    out = []
    for item in items:
        name, _, path = item.partition("=")
        if name not in decode.METHODS:
            raise UsageError(f"--method {item!r}: expected one of {', '.join(decode.METHODS)} (optionally =RM_PATH)")
        if name in [n for n, _ in out]:
            raise UsageError(f"--method {name} is given twice")
        out.append((name, path or None))
    return out


def prepare_generate(s: GenerateSettings, *, lm_path, prompts, rm_path=None, scorer=None,
                     val_prompts=None) -> GenerateInputs:
    import math

    if not (math.isfinite(s.w) and abs(s.w) <= W_MAX):
        raise UsageError(f"--w {s.w:g}: expected a number in [-{W_MAX:g}, {W_MAX:g}]")
    if not s.w_grid or not all(math.isfinite(w) and abs(w) <= W_MAX for w in s.w_grid):
        raise UsageError(f"--w-grid {','.join(f'{w:g}' for w in s.w_grid)}: expected numbers in [-{W_MAX:g}, {W_MAX:g}]")
    if val_prompts is None and s.w_grid != GenerateSettings.w_grid:
        raise UsageError("--w-grid is searched on --val-prompts: give --val-prompts JSONL (or a single --w)")
    if val_prompts is not None and scorer is None:
        raise UsageError("--val-prompts picks w by the mean score of validation generations: give --scorer")
    if s.max_new < 1:
        raise UsageError(f"--max-new {s.max_new}: expected at least 1")
    lm = store.load_lm(lm_path)
    if not 1 <= s.k <= lm.vocab_size:
        raise UsageError(f"--k {s.k}: expected 1 <= k <= the vocabulary size {lm.vocab_size}")
    loaded: dict[str, store.Loaded] = {}
    specs = []
    for name, path in parse_methods(s.methods):
        path = path or rm_path
        if name != "ref" and path is None:
            raise UsageError(f"--method {name} needs a reward model: give --rm RM.pt or --method {name}=RM.pt")
        model = None
        if name != "ref":
            if path not in loaded:
                loaded[path] = store.load_rm(path)
                store.check_same_vocab(lm, loaded[path], lm_path, path)
            model = loaded[path]
            if name in decode.ONE_CALL and model.kind == "scalar":
                raise UsageError(f"--method {name} needs a token-level RM (one score per next token); {path} is a "
                                 "scalar full-sequence RM (--loss seq): use it with args or best-of-n")
        specs.append(MethodSpec(name, model, path))
    ids = store.read_prompts(prompts, lm.vocab)
    val_ids = None if val_prompts is None else store.read_prompts(val_prompts, lm.vocab)
    longest = max(len(p) for p in ids + (val_ids or [])) + s.max_new
    for name, model in [(lm_path, lm), *loaded.items()]:
        limit = model.meta.get("config", {}).get("max_len")
        if limit is not None and longest > limit:
            raise UsageError(f"the longest prompt plus --max-new {s.max_new} is {longest} tokens, over the "
                             f"{limit} positions of {name}")
    true_reward, scorer_model = None, None
    if scorer is not None:
        if str(scorer).endswith(".json"):
            true_reward = store.read_true_reward(scorer)
            if true_reward["vocab"] != getattr(lm.vocab, "tokens", None):
                raise InputError(f"{scorer}: its vocabulary differs from the LM's ({lm_path})")
        else:
            scorer_model = store.load_rm(scorer)
            store.check_same_vocab(lm, scorer_model, lm_path, scorer)
    device = resolve_device(s.device)
    for model in [lm, scorer_model, *loaded.values()]:
        if model is not None:
            model.module.to(device)
    paths = [lm_path, prompts, val_prompts, rm_path, scorer] + [m.rm_path for m in specs]
    return GenerateInputs(s, lm, specs, ids, scorer_model, true_reward, list(dict.fromkeys(p for p in paths if p)),
                          device, val_ids)


def _decode_method(inputs: GenerateInputs, spec: MethodSpec, batch, seed, w):
    s, lm = inputs.settings, inputs.lm
    ids, pads = (t.to(inputs.device) for t in decode.left_pad(batch))
    kw = dict(k=s.k, seed=seed, pad_left=pads, eos_id=lm.vocab.eos_id)
    if spec.name == "best-of-n":
        return decode.best_of_n(lm.module, ids, s.max_new, rm=spec.rm.module, n=s.n, **kw)
    rm_model = None if spec.rm is None else spec.rm.module
    return decode.generate(lm.module, ids, s.max_new, method=spec.name, rm=rm_model, w=w,
                           greedy=s.decode == "greedy", score_impl=s.score_impl, **kw)


def _trim(tokens, eos_id):
    return tokens[: tokens.index(eos_id) + 1] if eos_id is not None and eos_id in tokens else tokens


def _decode_rows(inputs: GenerateInputs, spec: MethodSpec, prompts, sample: int, w: float, seed: int) -> list[dict]:
    """One generation per prompt (batches of --batch-size), with its per-row share of the counters."""
    s, eos, rows = inputs.settings, inputs.lm.vocab.eos_id, []
    for start in range(0, len(prompts), s.batch_size):
        batch = prompts[start: start + s.batch_size]
        out, c = _decode_method(inputs, spec, batch, seed + start, w)
        for i, (p, toks) in enumerate(zip(batch, out.tolist(), strict=True)):
            rows.append({"method": spec.name, "prompt_index": start + i, "sample": sample, "prompt": p,
                         "tokens": _trim(toks, eos), "lm_calls": c.lm_calls / len(batch),
                         "rm_calls": c.rm_calls / len(batch), "seconds": c.seconds / len(batch)})
    return rows


def _validation_means(inputs: GenerateInputs, spec: MethodSpec, run: Any) -> dict[str, float]:
    """Mean validation score of ``spec`` at every w of --w-grid (one sample per validation prompt, its own seeds)."""
    def compute():
        means = {}
        for w in inputs.settings.w_grid:
            rows = _decode_rows(inputs, spec, inputs.val_prompts, 0, w, inputs.settings.seed + 10_000_019)
            _score(inputs, rows)
            means[repr(float(w))] = float(np.mean([r["score"] for r in rows]))
        return means

    return run.cached(f"val-{spec.name}", compute, fmt="json")


def pick_w(means: dict[str, float]) -> float:
    """The w with the highest validation mean (the smallest such w on a tie)."""
    return min((-v, float(w)) for w, v in means.items())[1]


def execute_generate(inputs: GenerateInputs, run: Any, progress: Any = default_progress) -> dict[str, Any]:
    s = inputs.settings
    validate = inputs.val_prompts is not None
    chosen = {spec.name: s.w for spec in inputs.methods}
    val_means = {}
    for spec in inputs.methods:
        if validate and spec.name in W_METHODS:
            val_means[spec.name] = _validation_means(inputs, spec, run)
            chosen[spec.name] = pick_w(val_means[spec.name])
    jobs = [(spec, j) for spec in inputs.methods for j in range(s.samples)]
    rows_all, summary = [], []
    with progress(total=len(jobs), desc="generate", unit="method x sample") as bar:
        for spec, j in jobs:
            rows_all += run.cached(f"gen-{spec.name}-{j}", lambda spec=spec, j=j: _decode_rows(
                inputs, spec, inputs.prompts, j, chosen[spec.name], s.seed + 1000 * j), fmt="json")
            bar.update(1)
    _score(inputs, rows_all)
    for spec in inputs.methods:
        summary.append(_summarise(inputs, spec.name, [r for r in rows_all if r["method"] == spec.name]))
        if spec.name in W_METHODS:
            summary[-1]["w"] = chosen[spec.name]
        if spec.name in val_means:
            summary[-1]["w_validation_means"] = val_means[spec.name]
    for r in rows_all:
        r["text"] = inputs.lm.vocab.decode(r["tokens"])
        r["prompt"] = inputs.lm.vocab.decode(r["prompt"])
    return {"rows": rows_all, "summary": summary}


def _score(inputs: GenerateInputs, rows) -> None:
    if inputs.true_reward is not None:
        task = task_from_files(inputs.lm, inputs.true_reward, 0)
        for r in rows:
            r["score"] = toy.true_reward(task, r["prompt"] + r["tokens"])
    elif inputs.scorer is not None:
        seqs = rm.Seqs.from_lists([r["prompt"] + r["tokens"] for r in rows]).to(inputs.device)
        with torch.no_grad():
            scores = rm.score_sequences(inputs.scorer.module, seqs).tolist()
        for r, v in zip(rows, scores, strict=True):
            r["score"] = float(v)


def _summarise(inputs: GenerateInputs, name: str, rows) -> dict[str, Any]:
    tokens = sum(len(r["tokens"]) for r in rows)
    out = {"method": name, "generations": len(rows), "tokens_per_generation": tokens / len(rows),
           "lm_calls_per_generation": float(np.mean([r["lm_calls"] for r in rows])),
           "rm_calls_per_generation": float(np.mean([r["rm_calls"] for r in rows])),
           "rm_calls_per_token": sum(r["rm_calls"] for r in rows) / max(tokens, 1),
           "seconds_per_token": sum(r["seconds"] for r in rows) / max(tokens, 1)}
    if "score" in rows[0]:
        out["score_mean"], out["score_se"] = evaluate.mean_se([r["score"] for r in rows])
    groups: dict[int, list] = {}
    for r in rows:
        groups.setdefault(r["prompt_index"], []).append(r["tokens"])
    out["diversity_rouge_l"] = evaluate.diversity(groups.values())
    if inputs.true_reward is not None and inputs.lm.kind == "markov":
        s = inputs.settings
        # over every continuation: FaRMA/CD rank all tokens by LM logit + w r, so pi_ref's top k does not bound them
        opt = [toy.optimum(task_from_files(inputs.lm, inputs.true_reward, len(p) + s.max_new), p)
               for p in inputs.prompts]
        out["optimum_mean"] = float(np.mean(opt))
    return out


def add_gap_fraction(summary: list[dict]) -> None:
    """Fraction of the pi_ref-to-optimum gap each method closes (needs ref, a true reward and a Markov LM)."""
    ref = next((m for m in summary if m["method"] == "ref"), None)
    if ref is None or "optimum_mean" not in ref or "score_mean" not in ref:
        return
    gap = ref["optimum_mean"] - ref["score_mean"]
    for m in summary:
        m["gap_closed"] = (m["score_mean"] - ref["score_mean"]) / gap if gap > 0 else None
