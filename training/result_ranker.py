"""Fine-tune all-MiniLM-L6-v2's top layer(s) and a one-score head to re-rank the linear ranker's best units
(Evidence Inference 2.0): which of them states the result for the prompt's comparison and outcome.

Writes src/deepcritical/reading/result_ranker.safetensors (the trained layers, the head and the weight of
the linear ranker's logit, float16), read without torch by ``deepcritical.reading.transformer_ranker``.
Data: ../shared/data/evidence-inference (DeYoung, Lehman, Nye, Marshall, Wallace, BioNLP 2020; MIT licence).
For every prompt of the ``train`` articles with a full text and the doctors' evidence offsets, the linear
ranker's best ``--candidates`` units (the units the re-ranker will see at run time); a unit is a positive
when it overlaps the doctors' evidence (as the linear ranker's training defines it). The epoch kept is the
one whose evidence found by the first unit is best on the ``validation`` articles (the measure
``deepcritical eval evidence-inference`` prints as ``evidence_found_first``).

Run from a venv with torch's CPU build (never a project dependency), at most 2 threads:

    nice -n 5 /work/wt/torchvenv/bin/python training/result_ranker.py --epochs 2            # train, write
    nice -n 5 /work/wt/torchvenv/bin/python training/result_ranker.py --epochs 2 --dry-run  # figures only
    nice -n 5 /work/wt/torchvenv/bin/python training/result_ranker.py --epochs 2 --verify   # rebuilds them?

The loss is a binary cross-entropy per unit plus a softmax cross-entropy over each prompt's candidates
(the positives' share). The encoder is ``training/result_classifier.py``'s (the graph
``evidence/onnx_bert.py`` builds, operator for operator); the frozen layers' outputs are computed once and
cached in ``--cache`` (default /tmp/eireader/).
"""

from __future__ import annotations

import argparse
import json
import math
import pickle
import sys
import time
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F  # noqa: N812 - torch's own convention
from safetensors.torch import load_file

sys.path.insert(0, str(Path(__file__).resolve().parent))
from deepcritical.reading.result_features import ranker_features
from deepcritical.reading.results import ResultReader, best_outcome_share
from deepcritical.reading.transformer_classifier import configured_tokenizer
from deepcritical.reading.transformer_ranker import (
    CANDIDATES,
    LINEAR_WEIGHT,
    RANKER_MAX_TOKENS,
    RANKER_WEIGHTS_FILE,
    ranker_text,
)
from result_classifier import (
    AUTOCAST,
    Encoder,
    frozen_states,
    mean_pool,
    model_dir,
    seeded,
    step,
    trained_tensors,
    verify,
    write_weights,
)
from result_reader import DATA, fulltext_prompts, load

OUT = Path(__file__).resolve().parents[1] / "src" / "deepcritical" / "reading" / RANKER_WEIGHTS_FILE


def candidates(ids: list[str], prompts, annotations, k: int) -> list[dict]:  # type: ignore[no-untyped-def, type-arg]
    """Per prompt with a full text and evidence offsets: the linear ranker's best ``k`` units (their texts
    as the re-ranker reads them, their linear logits, whether each overlaps the doctors' evidence) and
    whether the evidence is anywhere in the article."""
    reader = ResultReader.load()
    out = []
    ordered = sorted(ids, key=lambda p: (prompts[p].pmcid, p))
    for prompt_id, comparison, units, spans in fulltext_prompts(ordered, prompts, annotations):
        best = best_outcome_share(units, comparison)
        logits = [reader.ranker.scores(ranker_features(u, comparison, best))[0] for u in units]
        order = sorted(range(len(units)), key=lambda i: (-logits[i], units[i].start))[:k]
        positive = [any(units[i].start < e and s < units[i].end for s, e in spans) for i in order]
        anywhere = any(any(u.start < e and s < u.end for s, e in spans) for u in units)
        out.append(
            {
                "id": prompt_id,
                "texts": [ranker_text(units[i], comparison) for i in order],
                "linear": [logits[i] for i in order],
                "positive": positive,
                "anywhere": anywhere,
            }
        )
    return out


def cached_candidates(split: str, ids, prompts, annotations, k: int, cache: Path) -> list[dict]:  # type: ignore[no-untyped-def, type-arg]
    path = cache / f"ranker-candidates-{split}-{k}.pkl"
    if path.is_file():
        return pickle.loads(path.read_bytes())  # type: ignore[no-any-return]
    rows = candidates(ids, prompts, annotations, k)
    cache.mkdir(parents=True, exist_ok=True)
    path.write_bytes(pickle.dumps(rows))
    return rows


def found_first(rows, scores) -> float:  # type: ignore[no-untyped-def]
    """Share of prompts whose best-scored candidate overlaps the doctors' evidence."""
    hits = sum(row["positive"][int(np.argmax(score))] for row, score in zip(rows, scores, strict=True))
    return hits / max(1, len(rows))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dry-run", action="store_true", help="print the figures, write no weights")
    parser.add_argument("--verify", action="store_true", help="write no weights: do these arguments rebuild them?")
    parser.add_argument("--out", type=Path, default=OUT, help="where the weights are written")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--train-layers", type=int, default=1)
    parser.add_argument("--lr", type=float, default=2e-4, help="the encoder's learning rate (the head's is 10x)")
    parser.add_argument("--prompts-per-batch", type=int, default=8)
    parser.add_argument("--candidates", type=int, default=CANDIDATES)
    parser.add_argument("--max-tokens", type=int, default=RANKER_MAX_TOKENS)
    parser.add_argument("--cache", type=Path, default=Path("/tmp/eireader"))
    parser.add_argument("--limit", type=int, default=0, help="train on this many prompts only (a smoke test)")
    args = parser.parse_args()
    if not DATA.is_dir():
        sys.exit(f"{DATA} is missing: the Evidence Inference data is needed to train the re-ranker")
    started = time.perf_counter()
    rng = seeded(args.seed)

    prompts, annotations, splits = load()
    ids = {s: sorted(p for p in annotations if splits.get(prompts[p].pmcid) == s) for s in ("train", "validation")}
    data = {s: cached_candidates(s, ids[s], prompts, annotations, args.candidates, args.cache) for s in ids}
    for split, rows in data.items():
        within = sum(any(r["positive"]) for r in rows)
        linear = found_first(rows, [r["linear"] for r in rows])
        print(
            f"{split}: {len(rows)} prompts; evidence among the {args.candidates} candidates {within / len(rows):.4f}, "
            f"anywhere {sum(r['anywhere'] for r in rows) / len(rows):.4f}; linear first unit {linear:.4f}",
            flush=True,
        )
    # A prompt with no positive among its candidates teaches no ranking; an article of fewer units than
    # candidates (none in this data) would break the prompts x candidates batches.
    train = [r for r in data["train"] if any(r["positive"]) and len(r["texts"]) == args.candidates]
    train = train[: args.limit or None]
    validation = [r for r in data["validation"] if len(r["texts"]) == args.candidates]
    assert len(validation) == len(data["validation"]), "a validation article has fewer units than candidates"

    base = model_dir()
    config = json.loads((base / "config.json").read_text(encoding="utf-8"))
    layers = int(config["num_hidden_layers"])
    trainable = list(range(layers - args.train_layers, layers))
    encoder = Encoder(load_file(str(base / "model.safetensors")), config, trainable)
    tokenizer = configured_tokenizer(base, args.max_tokens)

    def states_of(rows, name: str):  # type: ignore[no-untyped-def]
        path = args.cache / f"ranker-states-{name}{len(rows)}-{args.candidates}-{args.max_tokens}-{trainable[0]}.pt"
        if path.is_file():
            return torch.load(path)
        texts = [text for row in rows for text in row["texts"]]
        encoded = [(np.array([e.ids], dtype=np.int64), None) for e in tokenizer.encode_batch(texts)]
        states = [s.to(torch.bfloat16) for s in frozen_states(encoder, encoded, trainable[0])]
        torch.save(states, path)
        return states

    train_states = states_of(train, "train")
    validation_states = states_of(validation, "validation")
    lengths = [int(s.shape[0]) for s in train_states]
    print(
        f"tokens per unit: median {int(np.median(lengths))}, max {max(lengths)}; "
        f"frozen layers ready in {time.perf_counter() - started:.0f} s",
        flush=True,
    )

    k = args.candidates
    head = torch.nn.Linear(int(config["hidden_size"]), 1)
    linear_weight = torch.nn.Parameter(torch.tensor([1.0]))
    trained = [encoder.params[n] for n in encoder.trained_names()]
    optimizer = torch.optim.AdamW(
        [
            {"params": trained, "lr": args.lr},
            {"params": [*list(head.parameters()), linear_weight], "lr": args.lr * 10},
        ],
        weight_decay=0.01,
    )
    steps = args.epochs * math.ceil(len(train) / args.prompts_per_batch)
    warmup = max(1, steps // 10)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda step: min((step + 1) / warmup, max(0.0, (steps - step) / max(1, steps - warmup)))
    )

    def own_scores(states, rows_idx: list[int], dropout: float) -> torch.Tensor:  # type: ignore[no-untyped-def]
        """The head's score of each candidate of the prompts ``rows_idx`` (prompts x k)."""
        flat = [r * k + j for r in rows_idx for j in range(k)]
        width = max(states[i].shape[0] for i in flat)
        x = torch.zeros(len(flat), width, states[0].shape[1])
        mask = torch.zeros(len(flat), width, dtype=torch.long)
        for row, i in enumerate(flat):
            x[row, : states[i].shape[0]] = states[i].float()
            mask[row, : states[i].shape[0]] = 1
        with AUTOCAST():
            for layer in trainable:
                x = encoder.layer(layer, x, mask, dropout)
            pooled = mean_pool(x, mask)
            return head(F.dropout(pooled, dropout, encoder.training)).float().view(len(rows_idx), k)

    def evaluate() -> tuple[float, float, float]:
        encoder.training = False
        own = []
        with torch.no_grad():
            for start in range(0, len(validation), 16):
                own.append(own_scores(validation_states, list(range(start, min(start + 16, len(validation)))), 0.0))
        own_all = torch.cat(own)
        linear = torch.tensor([row["linear"] for row in validation])
        combined = own_all + linear_weight.detach() * linear
        return (
            found_first(validation, combined.numpy()),
            found_first(validation, own_all.numpy()),
            float(linear_weight.detach()),
        )

    targets = torch.tensor([row["positive"] for row in train], dtype=torch.float32)
    linear_train = torch.tensor([row["linear"] for row in train])
    best = None
    for epoch in range(1, args.epochs + 1):
        encoder.training = True
        tick = time.perf_counter()
        order = list(range(len(train)))
        rng.shuffle(order)
        total = 0.0
        for start in range(0, len(order), args.prompts_per_batch):
            group = order[start : start + args.prompts_per_batch]
            scores = own_scores(train_states, group, 0.1) + linear_weight * linear_train[group]
            target = targets[group]
            pointwise = F.binary_cross_entropy_with_logits(scores, target)
            listwise = -(scores.log_softmax(1) * (target / target.sum(1, keepdim=True))).sum(1).mean()
            loss = pointwise + listwise
            total += step(loss, optimizer, schedule, [*trained, *head.parameters(), linear_weight]) * len(group)
        combined, own, weight = evaluate()
        print(
            f"epoch {epoch}: train loss {total / len(train):.4f}; validation first unit {combined:.4f} "
            f"(head alone {own:.4f}; linear weight {weight:.3f}) ({time.perf_counter() - tick:.0f} s)",
            flush=True,
        )
        if best is None or combined > best[0]:
            tensors = trained_tensors(encoder, head)
            tensors[LINEAR_WEIGHT] = linear_weight.detach().numpy().astype(np.float16)
            best = (combined, epoch, tensors)
    assert best is not None
    found, epoch, tensors = best
    size = sum(t.nbytes for t in tensors.values())
    print(
        f"kept epoch {epoch}: validation evidence found by the first unit {found:.4f}; weights "
        f"{size / 1e6:.2f} MB float16; {time.perf_counter() - started:.0f} s in all"
    )
    if args.verify:
        verify("result_ranker", tensors)
    elif not args.dry_run:
        metadata = {
            "kind": "ranker",
            "input": "section words : masked unit",
            "max_tokens": str(args.max_tokens),
            "candidates": str(args.candidates),
            "validation_found_first": f"{found:.4f}",
        }
        figure = {
            "measure": "doctors' evidence read first among the linear ranker's best units (validation_found_first)",
            "value": round(found, 4),
            "protocol": f"validation articles, full texts, which chose the epoch ({epoch}): not held out",
        }
        write_weights(args, tensors, trainable, metadata, ("result_ranker", "The transformer result re-ranker", figure))


if __name__ == "__main__":
    main()
