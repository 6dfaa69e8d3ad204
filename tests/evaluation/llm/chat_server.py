"""A chat-completions server on 127.0.0.1 for the specs: it speaks the OpenAI protocol as
vLLM, llama.cpp's server or Ollama do, answers as a spec scripts it, and records every
request it was sent.

Answers come from the queue ``script(...)`` fills, in order; with the queue empty, from
``respond`` (a function of the request's JSON body), else a plain "OK". An answer is a
string (the reply's text) or an ``Answer``: any status, headers, raw body, a delay.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Answer:
    text: str | None = "OK"
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    raw: bytes | None = None  # the body as it is, instead of a completion made of ``text``
    delay: float = 0.0
    prompt_tokens: int = 10
    completion_tokens: int = 5


def error(status: int, message: str, **headers: str) -> Answer:
    body = json.dumps({"error": {"message": message, "type": "error", "code": status}}).encode()
    return Answer(text=None, status=status, raw=body, headers=headers)


def rate_limited(retry_after: float) -> Answer:
    return error(429, "Rate limit reached, slow down", **{"Retry-After": f"{retry_after:g}"})


def malformed(raw: str = '{"id": "chatcmpl-1", "choices": [') -> Answer:
    return Answer(text=None, raw=raw.encode())


@dataclass
class Request:
    path: str
    headers: dict[str, str]  # names in lower case
    body: Any
    at: float  # time.monotonic() when it arrived


class ChatServer:
    def __init__(self) -> None:
        self.answers: deque[str | Answer] = deque()
        self.respond: Callable[[dict[str, Any]], str | Answer] | None = None
        self.requests: list[Request] = []
        self._lock = threading.Lock()
        self.model = "test-model"
        self._http = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._http.daemon_threads = True
        self._thread = threading.Thread(target=self._http.serve_forever, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._http.server_address[1]}/v1"

    def script(self, *answers: str | Answer) -> None:
        self.answers.extend(answers)

    def close(self) -> None:
        self._http.shutdown()
        self._http.server_close()

    @property
    def chats(self) -> list[Request]:
        return [request for request in self.requests if request.path.endswith("/chat/completions")]

    def _next(self, body: dict[str, Any]) -> Answer:
        with self._lock:
            answer = self.answers.popleft() if self.answers else None
        if answer is None:
            answer = self.respond(body) if self.respond else "OK"
        return Answer(text=answer) if isinstance(answer, str) else answer

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def _send(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(body)))
                    for name, value in (headers or {}).items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up waiting (a timeout spec)

            def _headers(self) -> dict[str, str]:
                return {name.lower(): value for name, value in self.headers.items()}

            def do_GET(self) -> None:
                server.requests.append(Request(self.path, self._headers(), None, time.monotonic()))
                body = {
                    "object": "list",
                    "data": [{"id": server.model, "object": "model", "owned_by": "tests"}],
                }
                self._send(200, json.dumps(body).encode())

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = raw
                with server._lock:
                    server.requests.append(Request(self.path, self._headers(), body, time.monotonic()))
                if not self.path.endswith("/chat/completions"):
                    self._send(404, b'{"error": {"message": "not found"}}')
                    return
                answer = server._next(body if isinstance(body, dict) else {})
                if answer.delay:
                    time.sleep(answer.delay)
                if answer.raw is not None:
                    self._send(answer.status, answer.raw, answer.headers)
                    return
                completion = {
                    "id": f"chatcmpl-{len(server.requests)}",
                    "object": "chat.completion",
                    "created": int(time.time()),
                    "model": body.get("model", server.model) if isinstance(body, dict) else server.model,
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": answer.text},
                            "finish_reason": "stop",
                        }
                    ],
                    "usage": {
                        "prompt_tokens": answer.prompt_tokens,
                        "completion_tokens": answer.completion_tokens,
                        "total_tokens": answer.prompt_tokens + answer.completion_tokens,
                    },
                }
                self._send(answer.status, json.dumps(completion).encode(), answer.headers)

        return Handler
