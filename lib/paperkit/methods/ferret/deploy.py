"""Start Flower's own processes for a real federated run: ``flower-superlink`` and ``flower-supernode``.

``ferret-server`` starts a SuperLink (TLS by default; SuperNode authentication when given public
keys), registers the node keys, writes the ferret Flower App (a ``pyproject.toml`` and a two-line
module importing :mod:`paperkit.methods.ferret.flower`) and submits it as a run through the SuperLink's
Control API, as ``flwr run`` does. ``ferret-client`` starts a SuperNode that holds one partition
(``--node-config partition-id=I``). Flower runs the ServerApp and a ClientApp per message in its own
subprocesses; this module only starts, watches and stops the two long-lived processes.
"""

from __future__ import annotations

import contextlib
import hashlib
import ipaddress
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from paperkit.core.errors import InputError, PaperkitError, UsageError

LOOPBACK = ("127.0.0.1", "localhost", "::1")
APP_MODULE = "ferret_flower_app"

_PYPROJECT = """[build-system]
requires = ["hatchling"]
build-backend = "hatchling.build"

[project]
name = "paperkit-ferret"
version = "1.0.0"
description = "Ferret federated tuning (paperkit) as a Flower App"
dependencies = []

[tool.hatch.build.targets.wheel]
packages = ["."]

[tool.flwr.app]
publisher = "paperkit"

[tool.flwr.app.components]
serverapp = "{module}:server_app"
clientapp = "{module}:client_app"

[tool.flwr.app.config]
ferret = {settings}
"""

_MODULE = '''"""Ferret on Flower: the apps live in paperkit (installed on the SuperLink's and every SuperNode's machine)."""

from paperkit.methods.ferret.flower import make_apps

server_app, client_app = make_apps()
'''


def parse_hostport(value: str, option: str) -> tuple[str, int]:
    """'HOST:PORT' (or '[v6]:PORT') → (host, port); a UsageError naming ``option`` otherwise."""
    host, sep, port = value.strip().rpartition(":")
    host = host.strip("[]")
    if not sep or not host or not port.isdigit() or not 1 <= int(port) <= 65535:
        raise UsageError(f"{option} '{value}' is not HOST:PORT (e.g. 127.0.0.1:9092)")
    if any(c.isspace() for c in host) or "/" in host:
        raise UsageError(f"{option} '{value}': '{host}' is not a host name or address")
    return host, int(port)


def is_loopback(host: str) -> bool:
    if host in LOOPBACK:
        return True
    with contextlib.suppress(ValueError):
        return ipaddress.ip_address(host).is_loopback
    return False


def write_app(app_dir: str | os.PathLike, settings: dict[str, Any]) -> Path:
    """The Flower App folder of a run (what ``flwr run APP_DIR`` takes), with the settings as its config."""
    app = Path(app_dir)
    app.mkdir(parents=True, exist_ok=True)
    (app / "pyproject.toml").write_text(_PYPROJECT.format(module=APP_MODULE,
                                                          settings=json.dumps(json.dumps(settings, sort_keys=True))))
    (app / f"{APP_MODULE}.py").write_text(_MODULE)
    return app


def flower_env(flwr_home: str | os.PathLike) -> dict[str, str]:
    env = dict(os.environ)
    env.update(FLWR_HOME=str(flwr_home), FLWR_TELEMETRY_ENABLED="0", FLWR_DISABLE_UPDATE_CHECK="1",
               FLWR_DISABLE_RUNTIME_DEPENDENCY_INSTALLATION="1")
    # the apps import paperkit: make the copy this process runs theirs too (a source checkout included)
    import paperkit

    here = [str(Path(paperkit.__file__).resolve().parents[1])]
    paths = [*(env.get("PYTHONPATH") or "").split(os.pathsep), *here]
    env["PYTHONPATH"] = os.pathsep.join(p for p in dict.fromkeys(paths) if p)
    bindir = str(Path(sys.executable).parent)
    env["PATH"] = bindir + os.pathsep + env.get("PATH", "")
    return env


def executable(name: str) -> str:
    beside = Path(sys.executable).parent / name
    found = str(beside) if beside.exists() else shutil.which(name)
    if not found:
        raise PaperkitError(f"'{name}' was not found; it comes with the flwr package")
    return os.path.abspath(found)


# Run by a fresh interpreter in front of each Flower process on Linux: ask the kernel to send SIGTERM when
# the paperkit process that started it dies, even by SIGKILL, then become the Flower process (the request
# survives execv). Without it a killed ferret-server left its SuperLink listening for good. A wrapper, not
# Popen's preexec_fn, because preexec_fn is unsafe in a process with threads (torch's).
_DIE_WITH_PARENT = """import ctypes, os, signal, sys
ctypes.CDLL(None).prctl(1, int(signal.SIGTERM))  # 1 = PR_SET_PDEATHSIG
if os.getppid() != int(sys.argv[1]):
    sys.exit(0)  # the parent died before the request was made
os.execv(sys.argv[2], sys.argv[2:])
"""


def die_with_parent(command: list[str]) -> list[str]:
    """``command`` (an absolute executable first), wrapped so that it ends when this process does (Linux;
    elsewhere unchanged). The kernel watches the thread that starts it: start it from a long-lived thread."""
    if not sys.platform.startswith("linux"):
        return command
    return [sys.executable, "-c", _DIE_WITH_PARENT, str(os.getpid()), *command]


@dataclass
class FlowerProcess:
    """A Flower process in its own session (so stopping it also stops what it started), ended by the kernel
    if this process dies without stopping it."""

    name: str
    proc: subprocess.Popen
    log_path: Path

    @classmethod
    def start(cls, name: str, argv: list[str], *, env: dict[str, str], log_path: Path) -> FlowerProcess:
        log_path.parent.mkdir(parents=True, exist_ok=True)
        with open(log_path, "ab") as log:
            proc = subprocess.Popen(die_with_parent([executable(name), *argv]), stdout=log, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL, env=env, start_new_session=True)
        return cls(name, proc, log_path)

    def alive(self) -> bool:
        return self.proc.poll() is None

    def log_tail(self, lines: int = 40) -> list[str]:
        try:
            text = self.log_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return []
        import re

        clean = re.sub(r"\x1b\[[0-9;]*m", "", text)
        return [ln.strip() for ln in clean.splitlines() if ln.strip()][-lines:]

    def last_error(self) -> str:
        tail = self.log_tail(80)
        for ln in reversed(tail):
            if any(w in ln for w in ("ERROR", "Error", "error", "denied", "refused", "failed", "Failed")):
                return ln
        return tail[-1] if tail else "no output"

    def stop(self, timeout: float = 10.0, kill: bool = False) -> None:
        if self.proc.poll() is not None:
            return
        try:
            os.killpg(self.proc.pid, signal.SIGKILL if kill else signal.SIGTERM)
        except (ProcessLookupError, PermissionError):
            return
        try:
            self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=timeout)


def wait_listening(host: str, port: int, proc: FlowerProcess, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while True:
        if not proc.alive():
            raise PaperkitError(f"{proc.name} stopped at start-up: {proc.last_error()}")
        with contextlib.suppress(OSError), socket.create_connection((host, port), timeout=1.0):
            return
        if time.monotonic() > deadline:
            raise PaperkitError(f"{proc.name} did not listen on {host}:{port} within {timeout:.0f} s")
        time.sleep(0.2)


# ------------------------------------------------------------------------------------- SuperLink
def check_can_listen(host: str, port: int) -> None:
    """Bind host:port once, so a taken port or a foreign address is one clear error before Flower starts."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as e:
        raise UsageError(f"--listen: cannot resolve '{host}' ({e.strerror})") from None
    family, _, _, _, addr = infos[0]
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(addr)
        except OSError as e:
            raise PaperkitError(f"cannot listen on {host}:{port} ({e.strerror or e})") from None


def start_superlink(host: str, port: int, *, tls: tuple[str, str, str] | None, node_auth: bool,
                    flwr_home: Path, log_path: Path) -> FlowerProcess:
    """``flower-superlink`` on host:port (Fleet, Control and Runtime APIs share it in Flower ≥ 1.40)."""
    check_can_listen(host, port)
    argv = ["--host", host, "--port", str(port), "--disable-runtime-dependency-installation"]
    if tls is None:
        argv.append("--insecure")
    else:
        ca, cert, key = tls
        argv += ["--ssl-ca-certfile", ca, "--ssl-certfile", cert, "--ssl-keyfile", key]
    if node_auth:
        argv.append("--enable-supernode-auth")
    proc = FlowerProcess.start("flower-superlink", argv, env=flower_env(flwr_home), log_path=log_path)
    try:
        wait_listening("127.0.0.1" if host in ("0.0.0.0", "::") else host, port, proc, timeout=60.0)
    except BaseException:  # an interrupt while it starts must not leave it running
        proc.stop()
        raise
    return proc


def control_client(host: str, port: int, ca: str | None) -> Any:
    from flwr.cli.typing import SuperLinkConnection
    from flwr.cli.utils import init_http_client_from_connection

    target = "127.0.0.1" if host in ("0.0.0.0", "::") else host
    conn = SuperLinkConnection("paperkit", address=f"{target}:{port}", root_certificates=ca, insecure=ca is None)
    with open(os.devnull, "w") as sink, contextlib.redirect_stdout(sink):  # flwr prints "Using SuperLink: ..."
        return init_http_client_from_connection(conn)


def register_nodes(client: Any, public_keys: list[bytes]) -> list[int]:
    from flwr.proto.control_pb2 import RegisterNodeRequest

    ids = []
    for i, key in enumerate(public_keys):
        res = client.RegisterNode(RegisterNodeRequest(public_key=key, name=f"ferret-node-{i}"))
        if not res.node_id:
            raise PaperkitError(f"the SuperLink did not register node key {i + 1}")
        ids.append(int(res.node_id))
    return ids


def submit_run(client: Any, app_dir: Path) -> int:
    """Build the FAB from ``app_dir`` and start it as a run (what ``flwr run`` does)."""
    from flwr.cli.build import build_fab_from_disk
    from flwr.common.serde import fab_to_proto
    from flwr.proto.control_pb2 import StartRunRequest
    from flwr.supercore.fab import Fab

    fab = build_fab_from_disk(app_dir)
    res = client.StartRun(StartRunRequest(fab=fab_to_proto(Fab(hashlib.sha256(fab).hexdigest(), fab, {})),
                                          federation=""))
    if not res.HasField("run_id"):
        raise PaperkitError("the SuperLink did not start the run" + (f": {res.note}" if res.HasField("note") else ""))
    return int(res.run_id)


def run_status(client: Any, run_id: int) -> tuple[str, str, str]:
    """(status, sub_status, details) of a run, e.g. ('finished', 'completed', '')."""
    from flwr.proto.control_pb2 import ListRunsRequest

    res = client.ListRuns(ListRunsRequest(run_id=run_id))
    run = res.run_dict.get(run_id)
    if run is None:
        return "unknown", "", ""
    return run.status.status, run.status.sub_status, run.status.details


def stop_run(client: Any, run_id: int) -> None:
    from flwr.proto.control_pb2 import StopRunRequest

    with contextlib.suppress(Exception):
        client.StopRun(StopRunRequest(run_id=run_id))


# ------------------------------------------------------------------------------------- SuperNode
def resolve(host: str) -> None:
    try:
        socket.getaddrinfo(host, None)
    except socket.gaierror as e:
        raise PaperkitError(f"cannot resolve server host '{host}' ({e.strerror})") from None


def reachable(host: str, port: int, timeout: float = 2.0) -> bool:
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def wait_reachable(host: str, port: int, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while True:
        with contextlib.suppress(OSError), socket.create_connection((host, port), timeout=2.0):
            return
        if time.monotonic() > deadline:
            raise PaperkitError(f"no ferret-server (Flower SuperLink) reachable at {host}:{port} after "
                                f"{timeout:.0f} s")
        time.sleep(0.3)


def check_tls(host: str, port: int, ca: str) -> None:
    """Handshake once with the server, verifying its certificate against ``ca`` (before starting Flower)."""
    import ssl

    try:
        ctx = ssl.create_default_context(cafile=ca)
    except (OSError, ssl.SSLError) as e:
        raise InputError(f"{ca}: not a readable PEM CA certificate ({e})") from None
    try:
        with socket.create_connection((host, port), timeout=10.0) as raw, \
                ctx.wrap_socket(raw, server_hostname=host):
            return
    except ssl.SSLCertVerificationError as e:
        raise PaperkitError(f"TLS: the server at {host}:{port} is not trusted by {Path(ca).name} "
                            f"({e.verify_message}); use the CA the server's certificate was made with") from None
    except ssl.SSLError as e:
        raise PaperkitError(f"TLS handshake with {host}:{port} failed ({e.reason or e}); is the server started "
                            "with --insecure, or is this not a ferret-server?") from None
    except OSError as e:
        raise PaperkitError(f"cannot reach {host}:{port} ({e.strerror or e})") from None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_supernode(host: str, port: int, *, ca: str | None, private_key: str | None, node_config: dict[str, Any],
                    max_wait: float, flwr_home: Path, log_path: Path) -> FlowerProcess:
    cfg = " ".join(f"{k}={json.dumps(v) if isinstance(v, str) else v}" for k, v in node_config.items())
    argv = ["--superlink", f"{host}:{port}", "--node-config", cfg, "--host", "127.0.0.1",
            "--port", str(free_port()), "--max-wait-time", str(max_wait)]
    argv += ["--insecure"] if ca is None else ["--root-certificates", ca]
    if private_key:
        argv += ["--auth-supernode-private-key", private_key]
    return FlowerProcess.start("flower-supernode", argv, env=flower_env(flwr_home), log_path=log_path)
