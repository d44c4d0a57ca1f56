"""kgfm-motif benchmark, side by side in one process (prints ratios):

1. F3 lift (compiled kernels over bit-packed incidence rows) vs brute-force homomorphism enumeration (Python
   sets) on a 2k-triple KG: identical hyperedges, speed ratio (target >= 100x); a 50k-triple KG (target <= 10 s).
2. Training step time of f3 and star3 relative to ultra (the paper: richer motifs cost more).
3. Batched evaluation vs one query at a time: queries/s ratio (target >= 10x).
4. A ConnectHub(k) star(k+1) training step (the Table 1 setting: dim 32 x 4 layers, relation norm, 16 links)
   with the star lift as enumerated tuples vs as signed cubes (what the commands run): the same scores, and the
   speed ratio. Quick: k = 3, star4 (3 graphs); full: k = 4, star5 (3 graphs, ~1 M hyperedges: the tuples
   need ~12 GB of memory and a minute or more).

    python benchmarks/kgfm_motif.py [--quick]

Times are CPU seconds of one thread (best of a few repeats); the lift's compiled kernel is warmed up first.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

from paperkit.methods.kgfm.data import Graph, filter_sets
from paperkit.methods.kgfm.lift import lift, lift_bruteforce
from paperkit.methods.kgfm.model import ModelConfig, MotifModel
from paperkit.methods.kgfm.train import GraphTensors, evaluate, train_ranking


def random_kg(n_triples: int, n_entities: int, n_relations: int, seed: int = 0) -> Graph:
    rng = np.random.default_rng(seed)
    # a skewed entity distribution, as in real KGs (density ~ 1/sqrt(rank))
    ent = lambda: (rng.random(n_triples) ** 2 * n_entities).astype(np.int64)  # noqa: E731
    tr = np.unique(np.stack([ent(), rng.integers(n_relations, size=n_triples), rng.permutation(ent())], 1), axis=0)
    return Graph.from_triples(tr, n_entities, n_relations), tr


def timed(fn, reps: int = 3) -> tuple[float, object]:
    """Best CPU time of ``reps`` calls (one thread; CPU time, not wall time, so that other processes on a
    shared machine do not enter the ratios)."""
    best, out = float("inf"), None
    for _ in range(reps):
        t = time.process_time()
        out = fn()
        best = min(best, time.process_time() - t)
    return best, out


def target(value: str, size: str, quick: bool) -> str:
    """The target as the issue sets it; --quick runs smaller sizes, where fixed costs weigh more and the ratios
    come out lower (e.g. 82x and 62x at 500 triples against 114x and 151x at 2k), so say where it applies."""
    return f"target {value}" + (f" at {size}, the full run's size" if quick else "")


def bench_lift(quick: bool) -> None:
    # 10 relations (few, dense hyperedge sets: the kernel's fixed costs weigh most) and 50 (as in FB-type KGs)
    for n_rel in (10, 50):
        g, _ = random_kg(500 if quick else 2000, 300 if quick else 1000, n_rel)
        lift(g, "f3")  # compile the path kernel (numba, cached on disk) outside the timing
        t_fast, fast = timed(lambda g=g: lift(g, "f3"), reps=7)
        t_brute, slow = timed(lambda g=g: lift_bruteforce(g, "f3"), reps=1)
        same = all(np.array_equal(fast.edges[m], slow.edges[m]) for m in fast.edges)
        print(f"F3 lift, {len(g.edges) // 2} triples, {n_rel} relations: lift {1000 * t_fast:.1f} ms, brute force "
              f"{1000 * t_brute:.0f} ms, ratio {t_brute / t_fast:.0f}x ({target('>= 100x', '2k triples', quick)}), "
              "identical hyperedges: "
              f"{same}, {sum(fast.counts().values()):,} hyperedges")
    big, _ = random_kg(10_000 if quick else 50_000, 5_000 if quick else 20_000, 50, seed=1)
    t_big, lf = timed(lambda: lift(big, "f3"), reps=1)
    print(f"F3 lift, {len(big.edges) // 2} triples: {t_big:.2f}s (target <= 10 s), {sum(lf.counts().values()):,} "
          "hyperedges")


def bench_train(quick: bool) -> None:
    g, tr = random_kg(300, 150, 6, seed=2)
    filters = filter_sets(tr, n_relations=6)
    times = {}
    for fam in ("ultra", "f3", "star3"):
        torch.manual_seed(0)
        model = MotifModel(ModelConfig(family=fam, dim=32, layers=3))
        gt = GraphTensors.build(g, lift(g, fam, star_cubes_ok=True), model.types)
        sub = tr[: 16 * (2 if quick else 6)]
        t, _ = timed(lambda model=model, gt=gt, sub=sub: train_ranking(model, gt, sub, filters, epochs=1,
                                                                       batch_size=16, n_neg=32, lr=5e-4, seed=0), 2)
        times[fam] = t / (2 * len(sub) / 16)
    print("train step (16 queries): " + ", ".join(f"{f} {1000 * t:.0f} ms ({t / times['ultra']:.2f}x ultra)"
                                                  for f, t in times.items()))


def bench_eval(quick: bool) -> None:
    g, tr = random_kg(400, 200, 6, seed=3)
    filters = filter_sets(tr, n_relations=6)
    torch.manual_seed(0)
    model = MotifModel(ModelConfig(family="f3", dim=32, layers=3))
    gt = GraphTensors.build(g, lift(g, "f3"), model.types)
    q = tr[: 32 if quick else 96]
    t_b, rb = timed(lambda: evaluate(model, gt, q, filters, batch_size=64), 1)
    t_1, r1 = timed(lambda: evaluate(model, gt, q, filters, batch_size=1), 1)
    n = 2 * len(q)
    same = np.allclose(rb["ranks"], r1["ranks"])
    print(f"evaluation of {n} queries: batched {n / t_b:.0f} q/s, one at a time {n / t_1:.0f} q/s, ratio "
          f"{t_1 / t_b:.1f}x ({target('>= 10x', '192 queries', quick)}), same ranks: {same}")


def bench_star(quick: bool) -> None:
    import torch.nn.functional as F

    from paperkit.methods.kgfm.data import build_vocab, encode
    from paperkit.methods.kgfm.generators import connecthub

    k = 3 if quick else 4
    fam = f"star{k + 1}"
    gen = connecthub(k, 3, 0)
    v = build_vocab(gen.splits["train"])
    g = Graph.from_triples(encode(gen.splits["train"], v), v.n_entities, v.n_relations)
    rows = [r for r in gen.labels if r["split"] == "train"][:16]
    links = encode([(r["head"], r["relation"], r["tail"]) for r in rows], v)
    y = torch.tensor([float(r["label"]) for r in rows])
    res = {}
    for form in ("tuples", "cubes"):
        t_lift, lf = timed(lambda form=form: lift(g, fam, star_cubes_ok=form == "cubes"), 1)
        torch.manual_seed(0)
        model = MotifModel(ModelConfig(family=fam, dim=32, layers=4, dropout=0.0, relation_norm=True))
        gt = GraphTensors.build(g, lf, model.types)

        def step(model=model, gt=gt):
            sc = gt.scores(model, links, hide=True)
            logit = sc.gather(1, torch.as_tensor(links[:, 2:3])).squeeze(1)
            loss = F.binary_cross_entropy_with_logits(logit, y)
            model.zero_grad()
            loss.backward()
            return logit.detach()

        t, logit = timed(step, 1 if form == "tuples" else 3)
        res[form] = (t, t_lift, logit, lf.counts()[fam])
    (t_t, l_t, s_t, n), (t_c, l_c, s_c, _) = res["tuples"], res["cubes"]
    print(f"ConnectHub({k}) {fam} training step (16 links, {n:,} hyperedges): tuples {t_t:.2f} s (lift {l_t:.1f} s), "
          f"cubes {1000 * t_c:.0f} ms (lift {1000 * l_c:.0f} ms), ratio {t_t / t_c:.0f}x, max |logit difference| "
          f"{(s_t - s_c).abs().max().item():.1e}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="small sizes (about 30 s)")
    args = ap.parse_args()
    torch.set_num_threads(1)
    bench_lift(args.quick)
    bench_train(args.quick)
    bench_eval(args.quick)
    bench_star(args.quick)


if __name__ == "__main__":
    main()
