"""Train the learned layer of the detector and write policies/models/injection.json.

A logistic regression (L2, balanced classes, L-BFGS) over the binary features of
memrepo.detect.classifier (words, word bigrams, character 4-grams of the normalised text). Examples:
each row's whole text (and its decoded payloads) and every window of a benign row (the scanner
judges a text by its best window of one or two sentences, so each benign window is a chance of a
false alarm). The threshold is chosen on out-of-fold scores (one fold per source family), each
row scored as the scanner scores it, by its best window, so that the whole scanner (rules OR
classifier) stays under the false-alarm budget on the training benign texts; then the model is
refit on everything. Features are hashed into 2**20 buckets (memrepo.detect.classifier.bucket) and
every bucket ships: release 9 measured the old cut to the 10,000 largest weights on 6,360 texts of
heldout49-58 and extra_q-x, none trained on, with a model trained on heldout7-48: at the same
false-alarm rate (4.5%) the full model detected 83.9% where the cut one detected 78.3%; the
out-of-fold threshold is chosen for the full model, and the cut shifted its scores.

numpy and scipy are needed here only; inference in memrepo is pure Python.

Run: python bench/make_train_corpus.py && python bench/train_detector.py
Never train on a held-out set before it has been measured unseen (heldout32 on), nor on the shared dev corpus.
"""
from __future__ import annotations

import argparse
import json
import multiprocessing
import time
from array import array
from itertools import pairwise
from pathlib import Path

import numpy as np
from scipy import sparse
from scipy.optimize import minimize

from memrepo.detect import classifier as clf
from memrepo.detect.normalise import canonical_chain, decoded_payloads
from memrepo.detect.scanner import Scanner

ROOT = Path(__file__).resolve().parents[1]
TRAIN = ROOT / "bench" / "detector_train.jsonl"
OUT = ROOT / "policies" / "models" / "injection.json"
# The veto never rises above this probability: out-of-fold it bought little, and unseen attacks the
# classifier misjudged (corpus g3a43 p=0.06, heldout3 h3a086 p=0.07) were demoted by a veto of 0.095.
# Release 7 lowered it from 0.05: trained on heldout7-38 the recipe chose p 0.037, which demoted three
# hand-written override attacks of tests/test_detect_categories.py; capped at 0.02 it chose p 0.0067
# with the same out-of-fold figures (91.9% at 4.4%).
VETO_MAX = 0.02


def normalised(text: str) -> str:
    chain = canonical_chain(text)
    return chain[-1].text if chain else text


def row_texts(text: str, payloads: bool = True) -> list[str]:
    """The normalised text and, with ``payloads``, each decoded payload normalised: what the scanner classifies."""
    return [normalised(text), *(normalised(p.text) for p in decoded_payloads(text))] if payloads else [normalised(text)]


def examples(rows: list[dict[str, str]]) -> tuple[list[set[str]], list[int], list[int]]:
    """Feature sets, labels and the source row of each example; decoded payloads of attacks count
    as extra attack examples (the scanner classifies payloads too)."""
    feats, labels, src = [], [], []
    for i, r in enumerate(rows):
        y = 1 if r["label"] == "attack" else 0
        for t in row_texts(r["text"], payloads=bool(y)):
            feats.append(clf.features(clf.prepare(t)))
            labels.append(y)
            src.append(i)
    return feats, labels, src


def window_bags(rows: list[dict[str, str]]) -> list[list[set[str]]]:
    """Per row, the feature sets of every window the scanner scores (one sentence or two
    consecutive ones, of the normalised text and of each decoded payload): a row is judged by its
    best window, so that is what training and the out-of-fold estimate look at."""
    bags = []
    for r in rows:
        bag: list[set[str]] = []
        for t in row_texts(r["text"]):
            sents = [clf.features(s) for _, s in clf.windows(clf.prepare(t))]
            bag.extend(sents)
            bag.extend(a | b for a, b in pairwise(sents))
        bags.append(bag or [set()])
    return bags


def _family(row_id: str) -> int:
    prefixes = ("t", "hw-", "corpus-", "holdout-", "mem", "heldout2-", "heldout3-", "heldout4-", "dom-", "heldout5-", "heldout6-")
    for k, prefix in enumerate(prefixes):
        if row_id.startswith(prefix):
            return k
    if row_id.startswith("heldout"):  # heldout7 on: one family per five sets (their authors shared a brief)
        return len(prefixes) + 40 + (int(row_id[7:].split("-")[0]) - 7) // 5
    if row_id.startswith("extra_"):  # bench/train_extra/extra_<x>.jsonl: one family per file
        return len(prefixes) + 1 + ord(row_id[6]) - ord("a")
    return len(prefixes)


def matrix(feats: list[set[str]], vocab: dict[str, int]) -> sparse.csr_matrix:
    rows, cols = [], []
    for i, fs in enumerate(feats):
        for f in fs:
            j = vocab.get(f)
            if j is not None:
                rows.append(i)
                cols.append(j)
    return sparse.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(len(feats), 1 << clf.HASH_BITS))


def fit(x: sparse.csr_matrix, y: np.ndarray, c: float) -> tuple[np.ndarray, float]:
    pos = y.sum()
    sw = np.where(y == 1, len(y) / (2 * pos), len(y) / (2 * (len(y) - pos)))

    def loss(theta: np.ndarray) -> tuple[float, np.ndarray]:
        w, b = theta[:-1], theta[-1]
        z = x @ w + b
        p = 1 / (1 + np.exp(-z))
        eps = 1e-12
        ll = -np.sum(sw * (y * np.log(p + eps) + (1 - y) * np.log(1 - p + eps)))
        g = sw * (p - y)
        grad_w = x.T @ g + w / c
        return ll + 0.5 * np.dot(w, w) / c, np.append(grad_w, g.sum())

    res = minimize(loss, np.zeros(x.shape[1] + 1), jac=True, method="L-BFGS-B", options={"maxiter": 500})
    return res.x[:-1], float(res.x[-1])


class Windows:
    """Every row's windows as one matrix (rows' windows contiguous). A benign row's label belongs to
    each of its windows; an attack row's to at least one, which one is unknown: attacks stay whole
    texts (a multiple-instance variant that added each attack row's best window as a positive, two
    rounds, measured 68.9% vs 69.0% out of fold: no gain, not kept)."""

    def __init__(self, bags: list[list[set[str]]], vocab: dict[str, int]) -> None:
        self.x = matrix([fs for bag in bags for fs in bag], vocab)
        sizes = np.array([len(bag) for bag in bags])
        self.starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
        self.row = np.repeat(np.arange(len(bags)), sizes)

    def row_logits(self, w: np.ndarray, b: float) -> np.ndarray:
        """Each row's best window logit: what the scanner compares with its threshold."""
        return np.maximum.reduceat(self.x @ w + b, self.starts)

    def fit(self, x: sparse.csr_matrix, y: np.ndarray, ex_row: np.ndarray, row_y: np.ndarray, rows: np.ndarray,
            c: float, neg_windows: bool = True) -> tuple[np.ndarray, float]:
        """Fit on ``rows`` (a mask): whole-text examples ``x`` (of rows ``ex_row``) and, with
        ``neg_windows``, every window of the benign rows as a negative example."""
        ex = rows[ex_row]
        neg = rows[self.row] & ~row_y[self.row] & neg_windows
        return fit(sparse.vstack([x[ex], self.x[neg]]).tocsr(), np.concatenate([y[ex], np.zeros(int(neg.sum()))]), c)


# What the forked out-of-fold workers read (set before the fork, inherited copy-on-write).
_FOLD_STATE: tuple | None = None


def _fold_logits(k: int | None) -> tuple[int | None, np.ndarray, float]:
    """Fit without fold ``k`` and score its rows' best windows; ``None`` fits every row and
    returns the weights themselves."""
    assert _FOLD_STATE is not None
    wins, x, y, ex_row, row_y, fold_of_row, c, neg_windows = _FOLD_STATE
    train = np.ones(len(row_y), dtype=bool) if k is None else fold_of_row != k
    w, b = wins.fit(x, y, ex_row, row_y, train, c, neg_windows)
    return k, (w if k is None else wins.row_logits(w, b)[fold_of_row == k]), b


def choose_threshold(args: argparse.Namespace, rows: list[dict[str, str]], row_y: np.ndarray,
                     row_logit: np.ndarray) -> tuple[float, float, float, float]:
    """The threshold and veto logits at which the whole scanner (rules OR classifier, each row by its
    out-of-fold best window) detects most within the false-alarm budget, and those rates."""
    # Rules (without the classifier) on each training row: "hard" findings always block, "soft" ones
    # (veto categories, raw text) block unless the classifier is confident the text is benign.
    from memrepo.resources import default_policy_files

    rules_only = Scanner.from_policy_files(default_policy_files())
    rules_only.model = None
    # "floored": a scoring-layer finding that blocks only at or above scan.score_model_floor (and the veto).
    hard = np.zeros(len(rows), dtype=bool)
    soft = np.zeros(len(rows), dtype=bool)
    floored = np.zeros(len(rows), dtype=bool)
    for i, r in enumerate(rows):
        for f in rules_only.scan_text(r["text"]):
            if f.severity != "error":
                continue
            if rules_only.score_floored(f):
                floored[i] = True
            elif rules_only.vetoable(f):
                soft[i] = True
            else:
                hard[i] = True
    floor = rules_only.score_model_floor
    floor_logit = float(np.log(floor / (1 - floor))) if floor is not None and 0 < floor < 1 else (-np.inf if not floor else np.inf)
    rule_hit = hard | soft | floored
    for i in np.flatnonzero(rule_hit & ~row_y):
        print(f"  rules' false alarm on training benign: {rows[i]['id']}: {rows[i]['text'][:100]}")
    # The budget: --max-fa, or the rules' own false alarms plus --max-added-fa when the rules alone
    # exceed it (the hard benign sets in bench/train_extra/ trip the rules on 3-5% of their texts;
    # a fixed budget below that left no threshold at all).
    rules_fa = float(rule_hit[~row_y].mean())
    budget = max(args.max_fa, rules_fa + args.max_added_fa)
    best = None
    veto_cap = np.log(args.veto_max / (1 - args.veto_max)) if 0 < args.veto_max < 1 else (np.inf if args.veto_max >= 1 else -np.inf)
    for veto in [-np.inf, *(v for v in np.linspace(-8, 2, 41) if v <= veto_cap)]:
        for t in np.linspace(-2, 8, 201):
            flagged = hard | (soft & (row_logit >= veto)) | (floored & (row_logit >= max(veto, floor_logit))) | (row_logit >= t)
            fa = flagged[~row_y].mean()
            det = flagged[row_y].mean()
            if fa <= budget and (best is None or (det, veto) > (best[2], best[1])):
                best = (float(t), float(veto), det, fa)
    assert best is not None, "no threshold meets the false-alarm budget"
    t_logit, veto_logit, det, fa = best
    for i in np.flatnonzero(~rule_hit & ~row_y & (row_logit >= t_logit - 1.5)):
        print(f"  out-of-fold classifier score {row_logit[i]:+.2f} on training benign: {rows[i]['id']}: {rows[i]['text'][:90]}")
    print(f"out-of-fold: rules alone detect {rule_hit[row_y].mean():.1%} at {rule_hit[~row_y].mean():.1%} false alarms; "
          f"with classifier (logit >= {t_logit:.2f}, veto below {veto_logit:.2f}) {det:.1%} at {fa:.1%} (budget {budget:.1%})")
    return t_logit, veto_logit, det, fa


def main() -> None:
    global _FOLD_STATE
    ap = argparse.ArgumentParser(description=__doc__)
    # 3, not 1: out of fold (best windows, extra_a..l) c=0.3 68.6%, c=1 68.9%, c=3 69.9% at the same budget
    ap.add_argument("--c", type=float, default=3.0, help="inverse L2 strength")
    ap.add_argument("--min-df", type=int, default=2)
    ap.add_argument("--neg-windows", action=argparse.BooleanOptionalAction, default=True,
                    help="every window of a benign row is a negative example (the scanner judges each window)")
    # "none": no out-of-fold pass, the full fit only, written with --threshold and --veto (a threshold
    # chosen afterwards on a validation batch; the recipe's own choice needs the out-of-fold scores)
    ap.add_argument("--folds", choices=["source", "random", "none"], default="source")
    ap.add_argument("--threshold", type=float, help="with --folds none: the probability threshold written")
    ap.add_argument("--veto", type=float, default=0.0, help="with --folds none: the veto probability written (0: none)")
    # 1.5%, not 1%: benign template rows (bench/make_train_corpus.py) are held out as one block, so a
    # template family the other folds never saw counts dozens of times; at 1% the lockdown/setup
    # templates alone pushed the threshold from p 0.96 to 0.99 and cost 3-4 points on every held-out set.
    # 1.75% since heldout5/6 joined the training data: the rules alone false-alarm on 21 of their 300 benign
    # texts, which ate the 1.5% budget (with heldout3 left out no threshold met it). Hold-one-corpus-out over
    # heldout2-6, full scanner pooled: 1.75% gave 84.4% detection at 3.7% false alarms, 2% 86.3% at 4.7%
    # (one alarm per two detections), the old recipe at 1.5% 84.0% at 4.4%.
    ap.add_argument("--max-fa", type=float, default=0.0175, help="scanner false-alarm budget on out-of-fold training benign")
    # 2.5%, not 0.5%, since rows are scored by their best window as the scanner scores them (whole
    # texts, scored before, understated benign rows' scores: the old p 0.975 sat near 6% out of fold,
    # not the 2.5% it was chosen for). At 0.5% the threshold rose to p 0.998; on the three held-out
    # sets never trained on (heldout7-9, measured before, hence no longer unseen) detection fell from
    # 75.6% to 64.9% while false alarms fell only from 4.2% to 3.3%: the out-of-fold budget is spent on
    # the hard benign families (long notes, coding files, web pages), where the rules alone
    # false-alarm on ~10%.
    # 1.5% since release 9 (2.5% before): every weight now ships, and a model with all its weights, trained on
    # heldout7-48, false-alarmed on 6.2% of 3,180 unseen benign texts (heldout49-58, extra_q-x) at the threshold
    # the 2.5% budget chose (p 0.875; 87.4% detection), against 4.5% at p 0.95 (83.9%); the 10,000-weight
    # model it replaced scored 81.8% at 5.3% there. 1.5% chose p 0.948 for the heldout7-58 model.
    ap.add_argument("--max-added-fa", type=float, default=0.015,
                    help="when the rules alone exceed --max-fa: the classifier may add this much on top of their false alarms")
    ap.add_argument("--veto-max", type=float, default=VETO_MAX,
                    help="highest veto probability allowed (0 turns the veto off): below it the classifier demotes "
                         "pattern hits of scan.model_veto categories, so a high veto excuses real attacks")
    ap.add_argument("--out", type=Path, default=OUT, help="where to write the model")
    ap.add_argument("--save-oof", type=Path, help="write each row's out-of-fold best-window logit here (JSON), for comparisons")
    # Each fit is single-threaded (scipy's sparse products); the folds are independent, so forked
    # workers give the same scores in a fraction of the time (the full fit runs beside them).
    ap.add_argument("--jobs", type=int, default=multiprocessing.cpu_count(), help="fits run at once")
    args = ap.parse_args()
    if args.folds == "none" and not (args.threshold is not None and 0 < args.threshold < 1 and 0 <= args.veto < 1):
        ap.error("--folds none needs --threshold P with 0 < P < 1 (and --veto P with 0 <= P < 1)")
    t0 = time.time()
    rows = [json.loads(line) for line in TRAIN.read_text(encoding="utf-8").splitlines() if line.strip()]
    feats, labels, src = examples(rows)
    y = np.array(labels, dtype=float)
    df: dict[str, int] = {}
    for fs in feats:
        for f in fs:
            df[f] = df.get(f, 0) + 1
    # The hashing trick: a feature's column is its bucket, as at run time (clf.bucket), so features that
    # share a bucket are fitted together and the shipped table needs no strings.
    vocab = {f: clf.bucket(f) for f in sorted(f for f, n in df.items() if n >= args.min_df)}
    x = matrix(feats, vocab)
    print(f"{len(rows)} rows, {len(feats)} examples ({int(y.sum())} attack), {len(vocab)} features "
          f"in {len(set(vocab.values()))} of {1 << clf.HASH_BITS} buckets")

    # Out-of-fold scores. Folds follow the row's source family (generated, hand-written, the first
    # version's corpora, memories, the held-out sets written by other authors, docs): a family is scored by a model that never saw it, which
    # estimates new phrasings better than random folds over template-made rows would.
    fold_of_row = np.array([_family(r["id"]) for r in rows]) if args.folds == "source" else \
        np.random.default_rng(7).integers(0, 5, size=len(rows))
    row_y = np.array([r["label"] == "attack" for r in rows])
    wins = Windows(window_bags(rows), vocab)
    ex_row = np.array(src)
    row_logit = np.zeros(len(rows))
    _FOLD_STATE = (wins, x, y, ex_row, row_y, fold_of_row, args.c, args.neg_windows)
    jobs: list[int | None] = [None] if args.folds == "none" else [None, *sorted(set(fold_of_row.tolist()))]
    with multiprocessing.get_context("fork").Pool(max(1, args.jobs)) as pool:
        for k, out, bias in pool.imap_unordered(_fold_logits, jobs):
            if k is None:
                w, b = out, bias
            else:
                row_logit[fold_of_row == k] = out
    print(f"{len(jobs) - 1} out-of-fold fits and the full fit in {time.time() - t0:.0f} s")
    if args.folds == "none":  # no out-of-fold pass: the threshold and veto are given
        t_logit = float(np.log(args.threshold / (1 - args.threshold)))
        veto_logit = float(np.log(args.veto / (1 - args.veto))) if args.veto else -np.inf
        det = fa = None
    else:
        if args.save_oof:
            args.save_oof.write_text(json.dumps({r["id"]: float(z) for r, z in zip(rows, row_logit)}))
        t_logit, veto_logit, det, fa = choose_threshold(args, rows, row_y, row_logit)

    # int16 buckets: a weight is q * scale, q in [-32767, 32767] (the v2 format rounded weights to 4 decimals)
    scale = float(np.abs(w).max()) / 32767 or 1.0
    q = np.rint(w / scale).astype(np.int16)
    threshold = float(1 / (1 + np.exp(-t_logit)))
    veto = None if veto_logit == -np.inf else round(float(1 / (1 + np.exp(-veto_logit))), 6)
    doc = {
        "format": clf.FORMAT,
        "about": "memrepo injection classifier: logistic regression over words, word bigrams and character 4-grams "
                 "(see memrepo.detect.classifier), hashed into 2**bits buckets (CRC-32 of the feature's UTF-8); "
                 "table: the int16 buckets (weight = q * scale), little-endian, zlib, base64; "
                 "trained by bench/train_detector.py on bench/detector_train.jsonl",
        "trained": {"rows": len(rows), "examples": len(feats), "attacks": int(y.sum()), "features": len(vocab),
                    "buckets_used": int(np.count_nonzero(q)), "c": args.c,
                    **({} if det is None or fa is None else
                       {"oof_detection": round(float(det), 4), "oof_false_alarms": round(float(fa), 4)})},
        "bias": round(b, 4),
        "threshold": round(threshold, 4),
        "veto": veto,
        "bits": clf.HASH_BITS,
        "scale": scale,
        "table": clf.encode_table(array("h", q.tolist())),
    }
    out = args.out.resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(doc, ensure_ascii=False, separators=(",", ":"), sort_keys=False) + "\n", encoding="utf-8")
    print(f"wrote {out.relative_to(ROOT) if out.is_relative_to(ROOT) else out}: {int(np.count_nonzero(q))} buckets, threshold p >= {threshold:.3f}, "
          f"{out.stat().st_size / 1024:.0f} KB, {time.time() - t0:.0f} s")


if __name__ == "__main__":
    main()
