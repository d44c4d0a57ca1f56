"""Ferret (and the baselines) on Flower: a server strategy and a client that exchange only messages.

The global model never travels. Both sides build the initial model from the shared seed; each fit
instruction carries the compact messages (seed, K_l, gamma for Ferret) of the rounds the client has not
replayed yet, the client replays them with the same aggregation rule as the server (so its replica of
the global weights is bit-identical), trains, projects, and returns its own message. The server
samples the same clients as the in-process simulation (by partition id), aggregates in client order,
and therefore reaches the same global model with the same seeds.

Uses Flower's gRPC server/client entry points (``flwr.server.start_server``/``flwr.client.start_client``,
kept in Flower 1.x for long-running processes started by hand or by a scheduler). A client that drops
out mid-round is reported as a failure; the round completes with the others, as Flower allows.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from paperkit.core.errors import ConfigError, InputError
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


def task_fingerprint(task_spec: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(task_spec, sort_keys=True).encode()).hexdigest()[:16]


# ------------------------------------------------------------------------------------------ server
def make_strategy(fed: Federation, *, task_spec: dict[str, Any], min_clients: int, wait_timeout: float,
                  on_round: Callable[[ServerState, dict], None] | None = None) -> Any:
    from flwr.common import (
        FitIns,
        GetPropertiesIns,
        ndarrays_to_parameters,
        parameters_to_ndarrays,
    )
    from flwr.server.strategy import Strategy

    fingerprint = task_fingerprint(task_spec)
    config_json = json.dumps(fed.cfg.to_dict(), sort_keys=True)

    class FerretStrategy(Strategy):
        def __init__(self) -> None:
            self.state = fed.initial_state()
            self.history: list[tuple[int, list[ClientMessage]]] = []
            self.synced: dict[str, int] = {}
            self.partition: dict[str, int] = {}
            self.rows: list[dict] = []
            self.previous: list[ClientMessage] = []
            self._t0 = time.perf_counter()

        def initialize_parameters(self, client_manager):
            return ndarrays_to_parameters([])  # the initial model comes from the shared seed

        def configure_fit(self, server_round, parameters, client_manager):
            if not client_manager.wait_for(min_clients, timeout=wait_timeout):
                log.warning("round %d: only %d of %d clients connected after %.0f s; going on with those",
                            server_round, client_manager.num_available(), min_clients, wait_timeout)
            proxies = client_manager.all()
            for cid, proxy in proxies.items():
                if cid not in self.partition:
                    try:
                        res = proxy.get_properties(GetPropertiesIns({}), timeout=wait_timeout, group_id=server_round)
                    except Exception as e:  # noqa: BLE001 - a client that cannot answer is left out
                        log.warning("client %s did not report its partition (%s); leaving it out", cid, e)
                        continue
                    if res.properties.get("fingerprint") != fingerprint:
                        log.warning("client %s was started with different task options; leaving it out", cid)
                        self.partition[cid] = -1
                        continue
                    self.partition[cid] = int(res.properties["partition"])
            rnd = self.state.round
            by_part = {p: cid for cid, p in self.partition.items() if cid in proxies and p >= 0}
            instructions = []
            self._t0 = time.perf_counter()
            for part in fed.sample_clients(rnd):
                cid = by_part.get(part)
                if cid is None:
                    log.warning("round %d: client partition %d is not connected; the round goes on without it",
                                rnd + 1, part)
                    continue
                since = self.synced.get(cid, 0)
                arrays = encode_rounds(self.history[since:], fed.cfg.algo)
                cfg = {"round": rnd, "fingerprint": fingerprint, "fed_config": config_json}
                instructions.append((proxies[cid], FitIns(ndarrays_to_parameters(arrays), cfg)))
                self.synced[cid] = len(self.history)
            return instructions

        def aggregate_fit(self, server_round, results, failures):
            rnd = self.state.round
            for f in failures:
                log.warning("round %d: a client failed or disconnected (%s); aggregating the others",
                            rnd + 1, f if isinstance(f, BaseException) else "error status")
            msgs, up_bytes = [], []
            for _, res in results:
                decoded = decode_rounds(parameters_to_ndarrays(res.parameters), fed.cfg.algo)
                m = decoded[0][1][0]
                m.train_loss = float(res.metrics.get("train_loss", float("nan")))
                m.local_s = float(res.metrics.get("local_s", 0.0))
                m.proj_s = float(res.metrics.get("proj_s", 0.0))
                msgs.append(m)
                up_bytes.append(sum(len(t) for t in res.parameters.tensors))
            t1 = time.perf_counter()
            self.state = fed.aggregate(self.state, msgs)
            aggr_s = time.perf_counter() - t1
            msgs.sort(key=lambda m: m.client)
            self.history.append((rnd, msgs))
            metrics = fed.evaluate(self.state.weights)
            k = max(len(msgs), 1)
            row = {"round": rnd + 1, "algo": fed.cfg.algo, "clients": len(msgs), "failures": len(failures),
                   "train_loss": float(np.mean([m.train_loss for m in msgs])) if msgs else float("nan"),
                   "test_loss": metrics["test_loss"], "test_acc": metrics["test_acc"],
                   "uplink_floats": sum(m.uplink_floats for m in msgs) / k,
                   "uplink_bytes": sum(m.uplink_bytes(fed.cfg.alloc) for m in msgs) / k,
                   "uplink_wire_bytes": sum(up_bytes) / k,
                   "downlink_floats": fed.downlink_floats(self.previous),
                   "downlink_bytes": fed.downlink_bytes(self.previous),
                   "local_s": float(np.mean([m.local_s for m in msgs])) if msgs else 0.0,
                   "proj_s": float(np.mean([m.proj_s for m in msgs])) if msgs else 0.0,
                   "aggr_s": aggr_s, "wall_s": time.perf_counter() - self._t0}
            self.previous = msgs
            self.rows.append(row)
            if on_round is not None:
                on_round(self.state, row)
            return None, {"test_loss": row["test_loss"], "test_acc": row["test_acc"]}

        def configure_evaluate(self, server_round, parameters, client_manager):
            return []

        def aggregate_evaluate(self, server_round, results, failures):
            return None, {}

        def evaluate(self, server_round, parameters):
            return None

    return FerretStrategy()


def run_server(fed: Federation, *, address: str, task_spec: dict[str, Any], min_clients: int,
               wait_timeout: float = 120.0, round_timeout: float | None = 600.0,
               on_round: Callable[[ServerState, dict], None] | None = None) -> Any:
    """Serve ``fed.cfg.rounds`` rounds on ``address``; returns the strategy (final ``state``, ``rows``)."""
    import flwr

    strategy = make_strategy(fed, task_spec=task_spec, min_clients=min_clients, wait_timeout=wait_timeout,
                             on_round=on_round)
    flwr.server.start_server(server_address=address, strategy=strategy,
                             config=flwr.server.ServerConfig(num_rounds=fed.cfg.rounds, round_timeout=round_timeout))
    return strategy


# ------------------------------------------------------------------------------------------ client
def make_client(build_federation: Callable[[FedConfig], Federation], *, partition: int, task_spec: dict[str, Any],
                seed: int, drop_round: int | None = None) -> Any:
    """A Flower client for one data holder; the algorithm's settings come from the server."""
    from flwr.client import Client
    from flwr.common import (
        Code,
        FitRes,
        GetPropertiesRes,
        Status,
        ndarrays_to_parameters,
        parameters_to_ndarrays,
    )

    fingerprint = task_fingerprint(task_spec)

    class FerretClient(Client):
        def __init__(self) -> None:
            self.fed: Federation | None = None
            self.state: ServerState | None = None

        def get_properties(self, ins):
            return GetPropertiesRes(Status(Code.OK, ""), {"partition": partition, "fingerprint": fingerprint})

        def fit(self, ins):
            cfg = ins.config
            if cfg.get("fingerprint") != fingerprint:
                raise ConfigError("this client was started with task options different from the server's")
            if self.fed is None:
                fed_cfg = FedConfig(**json.loads(str(cfg["fed_config"])))
                if fed_cfg.seed != seed:
                    raise ConfigError(f"server seed {fed_cfg.seed} differs from this client's --seed {seed}")
                self.fed = build_federation(fed_cfg)
                self.state = self.fed.initial_state()
            fed = self.fed
            for rnd, msgs in decode_rounds(parameters_to_ndarrays(ins.parameters), fed.cfg.algo):
                if rnd < self.state.round:
                    continue  # already replayed
                if rnd != self.state.round:
                    raise InputError(f"missing the messages of round {self.state.round + 1}; cannot sync")
                self.state = fed.aggregate(self.state, msgs)
            rnd = int(cfg["round"])
            if rnd != self.state.round:
                raise InputError(f"asked to train round {rnd + 1} but synced to round {self.state.round}")
            if drop_round is not None and rnd + 1 == drop_round:
                log.warning("dropping out in round %d as asked (--drop-round)", rnd + 1)
                os._exit(17)  # a crash, as a lost machine would look to the server
            msg = fed.client_update(self.state.weights, rnd, partition)
            arrays = encode_rounds([(rnd, [msg])], fed.cfg.algo)
            return FitRes(Status(Code.OK, ""), ndarrays_to_parameters(arrays),
                          fed.task.client_sizes[partition],
                          {"train_loss": msg.train_loss, "local_s": msg.local_s, "proj_s": msg.proj_s})

    return FerretClient()


def wait_for_server(address: str, timeout: float) -> None:
    """Poll the server's port (Flower's own retries back off exponentially, up to tens of seconds)."""
    import socket

    host, _, port = address.rpartition(":")
    host = host.strip("[]") or "127.0.0.1"
    deadline = time.monotonic() + timeout
    while True:
        try:
            with socket.create_connection((host, int(port)), timeout=2.0):
                return
        except OSError:
            if time.monotonic() > deadline:
                raise InputError(f"no ferret-server reachable at {address} after {timeout:.0f} s") from None
            time.sleep(0.2)


def run_client(client: Any, *, address: str, max_retries: int | None = 30, max_wait_time: float | None = 120.0) -> None:
    import warnings

    import flwr

    wait_for_server(address, max_wait_time or 120.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        flwr.client.start_client(server_address=address, client=client, insecure=True,
                                 max_retries=max_retries, max_wait_time=max_wait_time)
