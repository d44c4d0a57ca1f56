"""Network options shared by ferret-server and ferret-client (not a command)."""

from __future__ import annotations

import contextlib

import click

DEFAULT_PORT = 9092


class HostPort(click.ParamType):
    """HOST:PORT, checked at parse time (a bad value is a one-line usage error, exit 2)."""

    name = "HOST:PORT"

    def convert(self, value, param, ctx):
        if isinstance(value, tuple):
            return value
        from paperkit.core.errors import UsageError
        from paperkit.methods.ferret.deploy import parse_hostport

        try:
            return parse_hostport(str(value), param.opts[0] if param else "address")
        except UsageError as e:
            self.fail(str(e), param, ctx)


def tls_ca_option(f):
    return click.option("--tls-ca", type=click.Path(exists=True, dir_okay=False), default=None, metavar="PEM",
                        help="CA certificate that signed the server's certificate (ferret-certs writes ca.crt).")(f)


insecure_option = click.option(
    "--insecure", is_flag=True,
    help="Plain HTTP instead of TLS, for a trial on one machine: allowed on 127.0.0.1 only.")


def max_wait_option(default: float):
    from paperkit_cli.commands.ferret_train import finite

    return click.option("--max-wait", type=finite(min=0.0, min_open=True), default=default, show_default=True,
                        help="Seconds to keep trying to reach the server (and to wait for it when it is lost).")


@contextlib.contextmanager
def stop_flower_on_sigterm():
    """SIGTERM (a scheduler, `timeout`, `kill`) unwinds like Ctrl-C, so the Flower processes this command
    started (in their own sessions) are stopped too instead of being left running."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum, frame):
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
