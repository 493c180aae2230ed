"""What every training entry writes beside the weights it ships: a sidecar (``NAME.provenance.json``, next to the
weights in the package) with the seed, the git commit, the sha256 of each data file read, the exact command and
the figures with their protocol; and a model card (``training/cards/NAME.md``) generated from that sidecar alone,
so the card, the sidecar and the weights cannot disagree (``tests/test_training_provenance.py`` checks all three).

    python training/provenance.py            # write every card again from its sidecar

Standard library only: the fine-tuning entries import this from a torch venv of their own.
"""

from __future__ import annotations

import hashlib
import json
import shlex
import subprocess
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "deepcritical"
DATA = ROOT.parent / "shared" / "data"
CARDS = ROOT / "training" / "cards"
# What a sidecar holds, whatever the artefact; each figure holds a measure, its value and its protocol.
REQUIRED = ("artefact", "title", "weights_sha256", "script", "command", "commit", "seed", "data_sha256", "figures")
FIGURE_KEYS = ("measure", "value", "protocol")


@dataclass(frozen=True)
class Artefact:
    """A weights file the package ships and the training entry that writes it."""

    name: str
    weights: Path
    script: str

    @property
    def sidecar(self) -> Path:
        return self.weights.with_name(f"{self.name}.provenance.json")

    @property
    def card(self) -> Path:
        return CARDS / f"{self.name}.md"


READING = PACKAGE / "reading"
ARTEFACTS = (
    Artefact("result_reader", READING / "result_reader.json.gz", "training/result_reader.py"),
    Artefact("result_classifier", READING / "result_classifier.safetensors", "training/result_classifier.py"),
    Artefact("result_ranker", READING / "result_ranker.safetensors", "training/result_ranker.py"),
    Artefact("verdict_model", PACKAGE / "appraisal" / "verdict_model.json", "training/verdict_model.py"),
    Artefact("number_tagger", READING / "number_tagger.json", "training/number_tagger.py"),
)


def artefact(name: str) -> Artefact:
    return next(item for item in ARTEFACTS if item.name == name)


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def data_hashes(paths: Iterable[Path]) -> dict[str, str]:
    """The sha256 of each data file read, by its path under ``../shared/data``; of a folder (``name/``), the
    sha256 of its manifest: a line ``SHA256  PATH`` for each file below it, sorted by path."""
    return {
        _data_name(path) + ("/" if path.is_dir() else ""): folder_sha256(path) if path.is_dir() else sha256_of(path)
        for path in paths
    }


def folder_sha256(folder: Path) -> str:
    files = sorted(path for path in folder.rglob("*") if path.is_file())
    manifest = "".join(f"{sha256_of(path)}  {path.relative_to(folder).as_posix()}\n" for path in files)
    return hashlib.sha256(manifest.encode()).hexdigest()


def _data_name(path: Path) -> str:
    try:
        return path.resolve().relative_to(DATA.resolve()).as_posix()
    except ValueError:  # a file given from elsewhere
        return path.name


def git_commit() -> str | None:
    """The commit the working tree is at (None outside a checkout); a tree with changes is marked ``-dirty``."""

    def git(*args: str) -> str:
        return subprocess.run(["git", *args], capture_output=True, text=True, check=False, cwd=ROOT).stdout.strip()

    commit = git("rev-parse", "HEAD")
    return commit + ("-dirty" if git("status", "--porcelain", "--untracked-files=no") else "") if commit else None


def this_command() -> str:
    """The command as it was typed, from the repository's root."""
    return shlex.join(["python", *sys.argv])


def read_sidecar(item: Artefact) -> dict[str, Any]:
    return dict(json.loads(item.sidecar.read_text(encoding="utf-8")))


def write_provenance(item: Artefact, record: dict[str, Any]) -> None:
    """The sidecar (with the weights' sha256 as they are now) and the card made from it."""
    record = {"artefact": item.weights.relative_to(ROOT).as_posix(), **record}
    record["weights_sha256"] = sha256_of(item.weights)
    missing = [key for key in REQUIRED if key not in record]
    if missing:
        raise ValueError(f"{item.name}: the sidecar lacks {', '.join(missing)}")
    item.sidecar.write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    write_card(item)


def record_verification(item: Artefact, reproduced: str, data_sha256: dict[str, str]) -> None:
    """The sidecar of weights already shipped, once their training entry rebuilt them (``--verify``): how they
    were reproduced and the data's sha256 as read then; the figures and the commit they were written at stay."""
    record = read_sidecar(item)
    if record["weights_sha256"] != sha256_of(item.weights):
        raise ValueError(f"{item.sidecar.name} describes other weights than {item.weights.name}")
    record |= {"reproduced": reproduced, "data_sha256": data_sha256}
    item.sidecar.write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    write_card(item)


def write_card(item: Artefact) -> None:
    item.card.parent.mkdir(parents=True, exist_ok=True)
    item.card.write_text(card(read_sidecar(item)), encoding="utf-8")


def _cell(value: Any) -> str:
    return str(value).replace("|", "\\|").replace("\n", " ")


def card(sidecar: dict[str, Any]) -> str:
    """The model card of a sidecar: every value in it is the sidecar's, nothing else."""
    lines = [
        f"# {sidecar['title']}",
        "",
        f"<!-- Generated by training/provenance.py from {sidecar['artefact'].rsplit('/', 1)[0]}/"
        f"{Path(sidecar['artefact']).name.split('.')[0]}.provenance.json: edit the training entry, not this file. -->",
        "",
        "| | |",
        "|---|---|",
        f"| Weights | `{sidecar['artefact']}` |",
        f"| sha256 | `{sidecar['weights_sha256']}` |",
        f"| Trained by | `{sidecar['script']}` |",
        f"| Command | `{sidecar['command']}` |",
        f"| Commit | `{sidecar['commit']}` |",
        f"| Seed | {sidecar['seed']} |",
    ]
    if "reproduced" in sidecar:
        lines.append(f"| Reproduced | {_cell(sidecar['reproduced'])} |")
    if "data" in sidecar:
        lines.append(f"| Data | {_cell(sidecar['data'])} |")
    lines += ["", "## Data files read (sha256)", "", "| file | sha256 |", "|---|---|"]
    lines += [f"| `{name}` | `{digest}` |" for name, digest in sidecar["data_sha256"].items()]
    lines += ["", "## Figures", "", "| measure | value | protocol |", "|---|---|---|"]
    for figure in sidecar["figures"]:
        protocol = figure["protocol"] + (f" (`{figure['command']}`)" if "command" in figure else "")
        lines.append(f"| {_cell(figure['measure'])} | {figure['value']} | {_cell(protocol)} |")
    if sidecar.get("parameters"):
        lines += ["", "## Parameters", "", "| name | value |", "|---|---|"]
        lines += [f"| {_cell(name)} | {_cell(value)} |" for name, value in sidecar["parameters"].items()]
    if sidecar.get("note"):
        lines += ["", "## Note", "", str(sidecar["note"])]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    for each in ARTEFACTS:
        write_card(each)
        print(f"wrote {each.card.relative_to(ROOT)}")
