"""A real HTTP server speaking the OpenAI Chat Completions wire format, for tests that run the command as a
user does: ``python openai_server.py --port N --log FILE`` prints ``ready`` once it listens on 127.0.0.1.

It behaves like llama.cpp's Python server: it lists one model, refuses ``response_format: json_schema``
(with HTTP 500, as it does) and answers JSON mode (``json_object``) with the scripted model's answer
(helpers/llm_server.py).
Each request is logged as one JSON line: path, response_format, max_tokens."""

from __future__ import annotations

import argparse
import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the tests folder, for the shared wire code

from deepcritical.appraisal.framing import parse_evidence
from helpers.llm_server import LLAMA_CPP_REFUSAL, LLAMA_CPP_REFUSAL_STATUS, scripted
from helpers.llm_wires import OPENAI, Reply


class Handler(BaseHTTPRequestHandler):
    log_path: Path

    def _send(self, status: int, payload: dict[str, Any]) -> None:
        body = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _log(self, entry: dict[str, Any]) -> None:
        with self.log_path.open("a", encoding="utf-8") as log:
            log.write(json.dumps(entry) + "\n")

    def do_GET(self) -> None:
        self._log({"path": self.path})
        if self.path == "/v1/models":
            self._send(200, OPENAI.models_answer())
        else:
            self._send(404, {"error": {"message": f"no route {self.path}"}})

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
        self._log(
            {"path": self.path, "response_format": body.get("response_format"), "max_tokens": body.get("max_tokens")}
        )
        if self.path != "/v1/chat/completions":
            self._send(404, {"error": {"message": f"no route {self.path}"}})
            return
        ask = OPENAI.read(body)
        if ask.mode == "native":
            self._send(LLAMA_CPP_REFUSAL_STATUS, LLAMA_CPP_REFUSAL)
            return
        reply = scripted(ask, [view.id for view in parse_evidence(ask.user_text)])
        if reply.text is None:  # tool calls are not this server's business: answer with the output instead
            reply = Reply(text=json.dumps(reply.args))
        self._send(200, OPENAI.answer(1, reply, (len(json.dumps(body)) // 4, len(reply.text or "") // 4)))

    def log_message(self, format: str, *args: Any) -> None:  # quiet: the log file says it all
        return


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--log", type=Path, required=True)
    options = parser.parse_args()
    Handler.log_path = options.log
    server = ThreadingHTTPServer(("127.0.0.1", options.port), Handler)
    print("ready", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
