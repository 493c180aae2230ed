"""What the redaction costs, on a finished demo-sized outcome and on log-line-sized text.

    python bench/redaction.py

Builds a Redactor over eight secrets (as many as a fully configured server holds), then times: one
redaction of a 300-character error line; one of a 20 kB report; and ``Redactor.model`` over a run's
outcome with 150 evidence items (the serialisation pass every run's outcome gets). Prints microseconds
per call, the median of repeated rounds.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

from pydantic import SecretStr

from deepcritical.redaction import Redactor
from deepcritical.run.events import RunFinished

SECRETS = [
    "AIzaQx7Vb2Kp9Wm4Zr8Tj3",
    "sk-probe-OPq8Zx2Vw7Jk4Rm9Lk3Jh6Gf5Ds",
    "ak-ZQ4vx9Lp2Wn7Bt5Kc",
    "f3Qz8Wx2Lk9Vb7Np4Rt",
    "yk-Gh5Zq2Xw8Pm3Lv",
    "tkZq9Xv4Wm2Pj7Lb5Rh8",
    "redis://user:Pw9Zq4Xv7Lm2@127.0.0.1:6379/0",
    "Sx7Qz4Vw9Kp2",
]


def timed(work: Callable[[], object], rounds: int = 7, calls: int = 20) -> float:
    samples = []
    for _ in range(rounds):
        started = time.perf_counter()
        for _ in range(calls):
            work()
        samples.append((time.perf_counter() - started) / calls)
    return statistics.median(samples) * 1e6


def main() -> None:
    from web_fakes import big_outcome  # type: ignore[import-not-found]

    redact = Redactor([SecretStr(secret) for secret in SECRETS])
    line = "the model server answered HTTP 400: invalid request; headers: {'authorization': 'Bearer " + "x" * 200
    report = ("Metformin users had less dementia in a cohort of 80 adults [1]. " * 320)[:20_000]
    event = RunFinished(outcome=big_outcome(150))
    print(f"secrets: {len(SECRETS)}")
    print(f"error line (300 chars): {timed(lambda: redact(line), calls=2000):.1f} us")
    print(f"report (20 kB): {timed(lambda: redact(report), calls=50):.1f} us")
    print(f"outcome with 150 items (Redactor.model): {timed(lambda: redact.model(event), calls=5):.0f} us")


if __name__ == "__main__":
    main()
