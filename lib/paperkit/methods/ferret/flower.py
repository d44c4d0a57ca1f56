"""Ferret (and the baselines) on Flower's Message API: a ``ServerApp`` and a ``ClientApp``.

The global model never travels. Both sides build the initial model from the shared seed; each
``train`` message carries the compact messages (seed, K_l, gamma for Ferret) of the rounds the node has
not replayed yet, the ClientApp replays them with the same aggregation rule as the server (so its
replica of the global weights is bit-identical), trains, projects, and replies with its own message.
The ServerApp samples the same clients as the in-process simulation (by partition id, which each
SuperNode reports once through a ``query`` message), aggregates in client order, and therefore reaches
the model ``ferret-train`` reaches with the same seeds. A node that fails or is lost mid-round is
logged as a failure; the round completes with the others.

Everything a run needs travels in the run config (one JSON entry ``ferret``): the task spec, the
FedConfig, and the run dir where the ServerApp checkpoints every round. A run started with a run dir
that holds a checkpoint resumes from it; nodes then replay the whole message history (for Ferret a
few hundred floats per client and round). ``flower-superlink``/``flower-supernode`` run these apps
(``deploy.py`` starts them for ``ferret-server``/``ferret-client``); ``run_virtual`` runs them on
Flower's simulation engine.
"""

from __future__ import annotations

import json
import logging
import os
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

from paperkit.core.errors import ConfigError, InputError, PaperkitError
from paperkit.methods.ferret.federated import ClientMessage, FedConfig, Federation, ServerState

log = logging.getLogger("paperkit.ferret.flower")

# ------------------------------------------------------------------------------------------- codec
def encode_rounds(rounds: list[tuple[int, list[ClientMessage]]], algo: str) -> list[np.ndarray]:
    """Messages of several rounds as two arrays: an int64 header and the float32 payloads."""
    header: list[int] = [len(rounds)]
    payloads = []
    for rnd, msgs in rounds:
        header += [rnd, len(msgs)]
        for m in msgs:
            header += [m.client, m.seed, len(m.counts), *m.counts, len(m.indices), *m.indices, m.payload.numel()]
            payloads.append(m.payload.detach().cpu().float().numpy())
    flat = np.concatenate(payloads) if payloads else np.zeros(0, np.float32)
    return [np.asarray(header, dtype=np.int64), flat.astype(np.float32)]


def decode_rounds(arrays: list[np.ndarray], algo: str) -> list[tuple[int, list[ClientMessage]]]:
    if len(arrays) != 2:
        raise InputError(f"malformed Flower message: expected 2 arrays, got {len(arrays)}")
    header, flat = arrays[0].tolist(), torch.from_numpy(np.array(arrays[1], dtype=np.float32))
    pos, fpos = 1, 0
    out = []
    for _ in range(header[0]):
        rnd, n = header[pos], header[pos + 1]
        pos += 2
        msgs = []
        for _ in range(n):
            client, seed, nc = header[pos:pos + 3]
            counts = header[pos + 3:pos + 3 + nc]
            pos += 3 + nc
            ni = header[pos]
            indices = header[pos + 1:pos + 1 + ni]
            pos += 1 + ni
            npay = header[pos]
            pos += 1
            msgs.append(ClientMessage(int(client), int(rnd), algo, flat[fpos:fpos + npay].clone(), seed=int(seed),
                                      counts=[int(c) for c in counts], indices=[int(i) for i in indices]))
            fpos += npay
        out.append((int(rnd), msgs))
    return out


# ----------------------------------------------------------------------------------- run settings
def run_settings(*, task: dict[str, Any], fed: FedConfig, run_dir: str | os.PathLike, min_clients: int,
                 wait_timeout: float, round_timeout: float, data_sha256: str | None = None) -> dict[str, Any]:
    """Everything both apps need, as it travels in the run config (``run_config["ferret"]``)."""
    return {"task": task, "fed": fed.to_dict(), "run_dir": str(Path(run_dir).resolve()),
            "min_clients": int(min_clients), "wait_timeout": float(wait_timeout),
            "round_timeout": float(round_timeout), "data_sha256": data_sha256}


def _settings(context: Any, fixed: dict[str, Any] | None = None) -> dict[str, Any]:
    if fixed is not None:
        return fixed
    raw = context.run_config.get("ferret")
    if not raw:
        raise ConfigError("the Flower run config has no 'ferret' entry; start runs with paperkit ferret-server "
                          "or with the app folder it writes")
    return json.loads(str(raw))


def build_federation(settings: dict[str, Any], *, data: str | None = None, model: str | None = None,
                     device: str | None = None) -> Federation:
    """The Federation of a run; ``data``/``model`` point at this machine's copies of the task files."""
    from paperkit.core.io import sha256_file
    from paperkit.methods.ferret.tasks import build_task

    t = dict(settings["task"])
    task = t["task"]
    if task not in ("digits", "instruct"):
        path = data or task.removeprefix("jsonl:")
        if not Path(path).is_file():
            raise InputError(f"{path}: no such file (this node's copy of the run's JSONL data; give it with --data)")
        want = settings.get("data_sha256")
        if want and sha256_file(path) != want:
            raise InputError(f"{path}: differs from the server's data (sha256 mismatch)")
        task = f"jsonl:{path}"
    model_dir = model or t.get("model_dir")
    cfg = FedConfig(**settings["fed"])
    if device is not None:
        cfg.device = device
    built = build_task(task, n_clients=t["clients"], alpha=t["dirichlet"], seed=cfg.seed, model_dir=model_dir,
                       d_model=t["d_model"], n_layers=t["layers"])
    return Federation(built, cfg)


# --------------------------------------------------------------------------------- server (logic)
class FerretServer:
    """The server side of the rounds, independent of Flower's transport (tested on its own).

    ``history`` holds every finished round's messages; ``synced[node]`` how many of them a node has
    replayed (it advances only on a good reply, so a node that failed gets the rounds again)."""

    def __init__(self, fed: Federation, state: ServerState | None = None,
                 history: list[tuple[int, list[ClientMessage]]] | None = None, rows: list[dict] | None = None):
        self.fed = fed
        self.state = state or fed.initial_state()
        self.history = list(history or [])
        self.rows = list(rows or [])
        self.synced: dict[int, int] = {}

    def instructions(self, by_partition: dict[int, int]) -> tuple[list[tuple[int, int, list[np.ndarray]]], list[int]]:
        """(node, partition, arrays) for the round's sampled partitions that have a node; missing partitions."""
        out, missing = [], []
        for part in self.fed.sample_clients(self.state.round):
            node = by_partition.get(part)
            if node is None:
                missing.append(part)
                continue
            since = self.synced.get(node, 0)
            out.append((node, part, encode_rounds(self.history[since:], self.fed.cfg.algo)))
        return out, missing

    def complete(self, replies: list[tuple[int, ClientMessage, int]], failures: int, t0: float) -> dict:
        """Aggregate the good replies (node, message, wire bytes) and return the round's row."""
        fed, rnd = self.fed, self.state.round
        msgs = sorted((m for _, m, _ in replies), key=lambda m: m.client)
        t1 = time.perf_counter()
        self.state = fed.aggregate(self.state, msgs)
        aggr_s = time.perf_counter() - t1
        previous = self.history[-1][1] if self.history else []
        for node, _, _ in replies:
            # the node replayed every finished round before this one (its replica is the pre-round model)
            self.synced[node] = len(self.history)
        self.history.append((rnd, msgs))
        metrics = fed.evaluate(self.state.weights)
        k = max(len(msgs), 1)
        row = {"round": rnd + 1, "algo": fed.cfg.algo, "clients": len(msgs), "failures": failures,
               "train_loss": float(np.mean([m.train_loss for m in msgs])) if msgs else float("nan"),
               "test_loss": metrics["test_loss"], "test_acc": metrics["test_acc"],
               "uplink_floats": sum(m.uplink_floats for m in msgs) / k,
               "uplink_bytes": sum(m.uplink_bytes(fed.cfg.alloc) for m in msgs) / k,
               "uplink_wire_bytes": sum(b for _, _, b in replies) / k,
               "downlink_floats": fed.downlink_floats(previous), "downlink_bytes": fed.downlink_bytes(previous),
               "local_s": float(np.mean([m.local_s for m in msgs])) if msgs else 0.0,
               "proj_s": float(np.mean([m.proj_s for m in msgs])) if msgs else 0.0,
               "aggr_s": aggr_s, "wall_s": time.perf_counter() - t0}
        fed.check_finite(row)
        self.rows.append(row)
        return row

    # -- checkpoint (deterministic: no seconds; those go to timing.csv) -----------------------------
    def checkpoint(self) -> dict[str, Any]:
        from paperkit.methods.ferret.checkpoint import split_timings

        header, payload = encode_rounds(self.history, self.fed.cfg.algo)
        data, _ = split_timings(self.rows)
        return {"state": self.state.to_checkpoint(), "rows": json.dumps(data),
                "history_header": torch.from_numpy(header), "history_payload": torch.from_numpy(payload)}

    @classmethod
    def from_checkpoint(cls, fed: Federation, saved: dict[str, Any], timing: list[dict] = ()) -> FerretServer:
        from paperkit.methods.ferret.checkpoint import join_timings

        history = decode_rounds([saved["history_header"].numpy(), saved["history_payload"].numpy()], fed.cfg.algo)
        rows = join_timings(json.loads(saved["rows"]), list(timing))
        return cls(fed, ServerState.from_checkpoint(saved["state"], fed.device), history, rows)


def save_server_checkpoint(run_dir: Path, server: FerretServer) -> None:
    from paperkit.core import io, tables
    from paperkit.methods.ferret.checkpoint import interrupt_safe, split_timings

    with interrupt_safe():
        io.save_torch(run_dir / "checkpoints" / "state.pt", server.checkpoint())
        tables.write_table(run_dir / "timing.csv", split_timings(server.rows)[1])


def load_server_checkpoint(run_dir: Path, fed: Federation) -> FerretServer | None:
    from paperkit.core import io, tables

    path = run_dir / "checkpoints" / "state.pt"
    if not path.exists():
        return None
    timing = tables.read_table(run_dir / "timing.csv").records() if (run_dir / "timing.csv").exists() else []
    return FerretServer.from_checkpoint(fed, io.load_torch(path), timing)


# ------------------------------------------------------------------------------------ Flower apps
PROGRESS = "progress.jsonl"   # in <run dir>/flower/: one line per round, then {"done": ...} or {"error": ...}


def _arrays_record(arrays: list[np.ndarray]) -> Any:
    from flwr.app import Array, ArrayRecord

    return ArrayRecord({"header": Array(np.ascontiguousarray(arrays[0])),
                        "payload": Array(np.ascontiguousarray(arrays[1]))})


def _record_arrays(record: Any) -> list[np.ndarray]:
    try:
        return [record["header"].numpy(), record["payload"].numpy()]
    except KeyError as e:
        raise InputError(f"malformed ferret message: no '{e.args[0]}' array") from None


def _progress(run_dir: Path, entry: dict) -> None:
    path = run_dir / "flower" / PROGRESS
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a", encoding="utf-8") as f:
        f.write(json.dumps(entry) + "\n")
        f.flush()


def _note(run_dir: Path | None, text: str, *args: Any) -> None:
    """A warning for the log and for whoever follows the run (ferret-server prints these)."""
    msg = text % args if args else text
    log.warning("%s", msg)
    if run_dir is not None:
        _progress(run_dir, {"note": msg})


def _discover(grid: Any, partitions: dict[int, int], n_clients: int, timeout: float,
              run_dir: Path | None = None) -> None:
    """Ask nodes not seen yet which partition they hold (one ``query`` message each)."""
    from flwr.app import ConfigRecord, RecordDict

    new = [n for n in grid.get_node_ids() if n not in partitions]
    if not new:
        return
    msgs = [grid.create_message(RecordDict({"ask": ConfigRecord({"what": "partition"})}), "query", n, "discover")
            for n in new]
    for reply in grid.send_and_receive(msgs, timeout=timeout):
        node = reply.metadata.src_node_id
        if reply.has_error():
            _note(run_dir, "node %s could not join: %s", node, reply.error.reason)
            partitions[node] = -1
            continue
        part = int(reply.content["node"]["partition"])
        if not 0 <= part < n_clients or part in partitions.values():
            _note(run_dir, "node %s holds partition %d, which is out of range or taken; leaving it out", node, part)
            part = -1
        partitions[node] = part


def server_main(grid: Any, context: Any, fixed: dict[str, Any] | None = None) -> None:
    """The ServerApp's main: wait for nodes, run the rounds, checkpoint each into the run dir."""
    torch.set_num_threads(1)
    settings = _settings(context, fixed)
    run_dir = Path(settings["run_dir"])
    try:
        _serve(grid, settings, run_dir)
    except Exception as e:
        _progress(run_dir, {"error": f"{type(e).__name__}: {e}" if not isinstance(e, PaperkitError) else str(e),
                            "exit_code": getattr(e, "exit_code", 1)})
        raise


def _serve(grid: Any, settings: dict[str, Any], run_dir: Path) -> None:
    from flwr.app import ConfigRecord, RecordDict

    fed = build_federation(settings)
    server = load_server_checkpoint(run_dir, fed) or FerretServer(fed)
    if server.state.round:
        _progress(run_dir, {"resumed_at": server.state.round})
    n_clients, need = fed.cfg.n_clients, settings["min_clients"]
    partitions: dict[int, int] = {}
    deadline = time.monotonic() + settings["wait_timeout"]
    while server.state.round < fed.cfg.rounds:
        _discover(grid, partitions, n_clients, settings["wait_timeout"], run_dir)
        have = sum(p >= 0 for p in partitions.values())
        if have >= need:
            break
        if time.monotonic() > deadline:
            if have == 0:
                raise PaperkitError(f"no client joined within {settings['wait_timeout']:.0f} s "
                                    "(see --wait-timeout and the clients' --server)")
            _note(run_dir, "only %d of %d clients joined after %.0f s; going on with those", have, need,
                  settings["wait_timeout"])
            break
        time.sleep(0.5)
    _progress(run_dir, {"joined": sorted(p for p in partitions.values() if p >= 0)})
    while server.state.round < fed.cfg.rounds:
        rnd = server.state.round
        _discover(grid, partitions, n_clients, settings["round_timeout"], run_dir)
        live = set(grid.get_node_ids())
        by_part = {p: n for n, p in partitions.items() if p >= 0 and n in live}
        t0 = time.perf_counter()
        todo, missing = server.instructions(by_part)
        for part in missing:
            _note(run_dir, "round %d: partition %d has no node; the round goes on without it", rnd + 1, part)
        messages = []
        for node, _, arrays in todo:
            content = RecordDict({"rounds": _arrays_record(arrays), "task": ConfigRecord({"round": rnd})})
            messages.append(grid.create_message(content, "train", node, str(rnd + 1)))
        replies, failures = [], len(missing)
        answered = set()
        for reply in grid.send_and_receive(messages, timeout=settings["round_timeout"]) if messages else []:
            node = reply.metadata.src_node_id
            answered.add(node)
            if reply.has_error():
                failures += 1
                server.synced.pop(node, None)
                _note(run_dir, "round %d: the node holding partition %d failed (%s); aggregating the others",
                      rnd + 1, partitions.get(node, -1), reply.error.reason)
                continue
            decoded = decode_rounds(_record_arrays(reply.content["message"]), fed.cfg.algo)
            m = decoded[0][1][0]
            metrics = reply.content["metrics"]
            m.train_loss, m.local_s, m.proj_s = (float(metrics["train_loss"]), float(metrics["local_s"]),
                                                 float(metrics["proj_s"]))
            wire = sum(a.nbytes for a in _record_arrays(reply.content["message"]))
            replies.append((node, m, wire))
        for node, _, _ in todo:
            if node not in answered:
                failures += 1
                server.synced.pop(node, None)
                _note(run_dir, "round %d: the node holding partition %d was lost or did not answer within %.0f s; "
                      "aggregating the others", rnd + 1, partitions.get(node, -1), settings["round_timeout"])
        if not replies:
            raise PaperkitError(f"round {rnd + 1}: no client answered (all {len(todo) + len(missing)} failed or "
                                "were missing)")
        row = server.complete(replies, failures, t0)
        save_server_checkpoint(run_dir, server)
        _progress(run_dir, {"row": row})
    # tell every node the run is over (ferret-client exits on it)
    done = [grid.create_message(RecordDict({"ask": ConfigRecord({"what": "done"})}), "query", n, "done")
            for n in grid.get_node_ids()]
    if done:
        grid.send_and_receive(done, timeout=min(30.0, settings["round_timeout"]))
    _progress(run_dir, {"done": server.state.round})


# ------------------------------------------------------------------------------------- client side
def _node(context: Any) -> dict[str, Any]:
    c = context.node_config
    return {"partition": int(c.get("partition-id", -1)), "data": c.get("data") or None,
            "model": c.get("model") or None, "control": c.get("control-dir") or None,
            "drop_round": int(c.get("drop-round", 0) or 0), "threads": int(c.get("threads", 1) or 1),
            "device": c.get("device") or None}


_FED_CACHE: dict[str, Federation] = {}


def _client_federation(settings: dict[str, Any], node: dict[str, Any]) -> Federation:
    key = json.dumps([settings, node["data"], node["model"], node["device"]], sort_keys=True)
    if key not in _FED_CACHE:
        _FED_CACHE.clear()
        _FED_CACHE[key] = build_federation(settings, data=node["data"], model=node["model"], device=node["device"])
    return _FED_CACHE[key]


def client_query(msg: Any, context: Any, fixed: dict[str, Any] | None = None) -> Any:
    from flwr.app import ConfigRecord, Message, RecordDict

    node = _node(context)
    what = msg.content["ask"]["what"]
    if what == "done":
        if node["control"]:
            Path(node["control"], "done").write_text("done\n")
        return Message(RecordDict({"node": ConfigRecord({"ok": True})}), reply_to=msg)
    try:
        settings = _settings(context, fixed)
        n = settings["task"]["clients"]
        if not 0 <= node["partition"] < n:
            raise ConfigError(f"--partition-id {node['partition']} is out of range; the server's run has {n} "
                              f"clients (0..{n - 1})")
        _client_federation(settings, node)  # builds the task now: a bad data copy fails here, not in round 1
    except PaperkitError as e:
        if node["control"]:  # ferret-client reports it and exits
            Path(node["control"], "error").write_text(json.dumps({"error": str(e), "exit_code": e.exit_code}))
        raise
    return Message(RecordDict({"node": ConfigRecord({"partition": node["partition"]})}), reply_to=msg)


def client_train(msg: Any, context: Any, fixed: dict[str, Any] | None = None) -> Any:
    from flwr.app import Array, ArrayRecord, ConfigRecord, Message, MetricRecord, RecordDict

    node = _node(context)
    torch.set_num_threads(node["threads"])
    settings = _settings(context, fixed)
    fed = _client_federation(settings, node)
    state = fed.initial_state()
    if "replica" in context.state.array_records:
        rec = context.state.array_records["replica"]
        meta = context.state.config_records["replica_meta"]
        state = ServerState(torch.from_numpy(rec["weights"].numpy().copy()),
                            torch.from_numpy(rec["momentum"].numpy().copy()) if meta["has_momentum"] else None,
                            int(meta["round"]))
    for rnd, msgs in decode_rounds(_record_arrays(msg.content["rounds"]), fed.cfg.algo):
        if rnd < state.round:
            continue  # already replayed
        if rnd != state.round:
            raise InputError(f"missing the messages of round {state.round + 1}; cannot sync")
        state = fed.aggregate(state, msgs)
    rnd = int(msg.content["task"]["round"])
    if rnd != state.round:
        raise InputError(f"asked to train round {rnd + 1} but synced to round {state.round}")
    if node["drop_round"] and rnd + 1 == node["drop_round"]:
        if node["control"]:
            Path(node["control"], "drop").write_text(f"{rnd + 1}\n")
        os._exit(17)  # a crash mid-round, as a lost machine looks to the server
    out = fed.client_update(state.weights, rnd, node["partition"])
    mom = state.momentum if state.momentum is not None else torch.zeros(0)
    context.state["replica"] = ArrayRecord({"weights": Array(state.weights.cpu().numpy()),
                                            "momentum": Array(mom.cpu().numpy())})
    context.state["replica_meta"] = ConfigRecord({"round": state.round, "has_momentum": state.momentum is not None})
    content = RecordDict({"message": _arrays_record(encode_rounds([(rnd, [out])], fed.cfg.algo)),
                          "metrics": MetricRecord({"train_loss": out.train_loss, "local_s": out.local_s,
                                                   "proj_s": out.proj_s})})
    return Message(content, reply_to=msg)


def make_apps(settings: dict[str, Any] | None = None) -> tuple[Any, Any]:
    """A (ServerApp, ClientApp) pair. ``settings`` fixes the run settings (for Flower's simulation
    engine, which has no run config of its own); by default they come from ``run_config["ferret"]``."""
    from flwr.clientapp import ClientApp
    from flwr.serverapp import ServerApp

    server_app, client_app = ServerApp(), ClientApp()

    @server_app.main()
    def main(grid, context):
        server_main(grid, context, settings)

    @client_app.train()
    def train(msg, context):
        return client_train(msg, context, settings)

    @client_app.query()
    def query(msg, context):
        return client_query(msg, context, settings)

    return server_app, client_app


def run_virtual(settings: dict[str, Any], n_nodes: int, *, backend_config: dict | None = None) -> None:
    """Run the apps on Flower's simulation engine with ``n_nodes`` virtual SuperNodes in this process
    (node i holds partition i). Needs Flower's simulation extra (Ray)."""
    from flwr.simulation import run_simulation

    server_app, client_app = make_apps(settings)
    run_simulation(server_app, client_app, num_supernodes=n_nodes,
                   backend_config=backend_config or {"client_resources": {"num_cpus": 1, "num_gpus": 0.0}})
