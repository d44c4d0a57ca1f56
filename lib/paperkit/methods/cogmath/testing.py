"""A loopback chat-completions server for tests, benchmarks and demos.

This is a **test double of the HTTP path, not a model**. It speaks the OpenAI chat-completions
protocol (``POST /v1/chat/completions``, ``GET /v1/models``) on 127.0.0.1, so the real ``openai``
backend — the official client, its retries, timeouts and concurrency — is exercised end to end
without a language model. Its replies come from a scripted responder: by default the template-aware
rule solver reading the problem out of the prompt, or any ``responder(prompt, request) -> str``.

Knobs to exercise failure handling: ``latency`` (seconds per request), ``status`` (a callable
returning an HTTP status, or ``(status, message)``, to send instead of an answer), ``malformed`` (answer 200 with a body that is
not chat-completions JSON), ``api_key`` (require ``Authorization: Bearer <key>``). Every request body
and its Authorization header are recorded in ``requests``.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Responder = Callable[[str, dict[str, Any]], str]


def rule_responder(template: str | None = None, failures: str | None = None) -> Responder:
    """Answers with the rule solver (optionally with failure modes) after stripping ``template``."""
    from paperkit.methods.cogmath.backends import RuleBackend, parse_failures
    from paperkit.methods.cogmath.prompts import load_prompts

    backend = RuleBackend(template=template or load_prompts().solve, failures=parse_failures(failures))
    return lambda prompt, request: backend.generate(prompt)


class ChatServer:
    """``with ChatServer() as s: OpenAI(base_url=s.base_url, ...)``"""

    def __init__(self, responder: Responder | None = None, *, latency: float = 0.0,
                 status: Callable[[int, dict[str, Any]], int | tuple[int, str] | None] | None = None,
                 malformed: bool = False,
                 api_key: str | None = None, model: str = "stub-model"):
        self.responder = responder or rule_responder()
        self.latency, self.status, self.malformed, self.api_key, self.model = latency, status, malformed, api_key, model
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._count = 0
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        assert self._server is not None, "server not started"
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def start(self) -> ChatServer:
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # keep test output clean
                return None

            def _send(self, code: int, payload: Any, raw: bytes | None = None) -> None:
                body = raw if raw is not None else json.dumps(payload).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:  # noqa: N802 - http.server API
                if self.path.rstrip("/").endswith("/models"):
                    self._send(200, {"object": "list", "data": [{"id": outer.model, "object": "model"}]})
                else:
                    self._send(404, {"error": {"message": "not found"}})

            def do_POST(self) -> None:  # noqa: N802 - http.server API
                length = int(self.headers.get("Content-Length") or 0)
                try:
                    body = json.loads(self.rfile.read(length) or b"{}")
                except json.JSONDecodeError:
                    self._send(400, {"error": {"message": "invalid JSON"}})
                    return
                with outer._lock:
                    n = outer._count
                    outer._count += 1
                    outer.requests.append({"body": body, "authorization": self.headers.get("Authorization")})
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send(404, {"error": {"message": f"no route {self.path}"}})
                    return
                if outer.api_key is not None and self.headers.get("Authorization") != f"Bearer {outer.api_key}":
                    self._send(401, {"error": {"message": "invalid api key", "type": "invalid_request_error"}})
                    return
                if outer.latency:
                    time.sleep(outer.latency)
                code = outer.status(n, body) if outer.status else None
                if code:
                    code, message = code if isinstance(code, tuple) else (code, f"scripted status {code}")
                    self._send(code, {"error": {"message": message, "type": "invalid_request_error"}})
                    return
                if outer.malformed:
                    self._send(200, None, raw=b'{"unexpected": true}')
                    return
                messages = body.get("messages") or []
                prompt = next((m.get("content", "") for m in reversed(messages) if m.get("role") == "user"), "")
                text = outer.responder(prompt, body)
                self._send(200, {
                    "id": f"chatcmpl-{n}", "object": "chat.completion", "created": 0, "model": body.get("model", ""),
                    "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                                 "finish_reason": "stop"}],
                    "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
                })

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> ChatServer:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

