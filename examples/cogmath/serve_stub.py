"""Serve the loopback chat-completions test double until stopped (SIGTERM or Ctrl-C).

Usage: python serve_stub.py [--latency S] [--failures SPEC] [--url-file FILE]

Prints the base URL (or writes it to --url-file), so the openai backend can be tried end to end
without a model. The replies come from the rule solver: they say nothing about any language model.
"""

import argparse
import signal
import sys
import threading

from paperkit.core.io import atomic_write
from paperkit.methods.cogmath.testing import ChatServer, rule_responder


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description="Loopback chat-completions test double (rule solver replies; not a model).")
    ap.add_argument("--latency", type=float, default=0.0, help="seconds to wait per request")
    ap.add_argument("--failures", default=None, help="rule solver failure modes, as for cogmath-eval --failures")
    ap.add_argument("--url-file", default=None, help="write the base URL here (atomically) instead of stdout")
    a = ap.parse_args(argv)
    server = ChatServer(rule_responder(failures=a.failures), latency=a.latency).start()
    if a.url_file:
        with atomic_write(a.url_file) as f:
            f.write(server.base_url + "\n")
    else:
        sys.stdout.write(server.base_url + "\n")
        sys.stdout.flush()
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        stop.wait()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()


if __name__ == "__main__":
    main()
