"""The detector's figures on real text beside its figures on the corpus, for the report (METHODS.md §4.1).

The demo corpus's personal data comes from the same generators as the detector's synthetic
training sentences, so its figures flatter the detector; the real corpora's test splits (BTC,
WNUT-17: tweets; GUM, GENTLE: documents; annotated by people, never trained on) say what to expect
on a user's text.
Pure: the ``detect`` stage's metrics in, a table out.
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

CAVEAT = ("Detection quality: the corpus row is the corpus's own test split; on the demo corpus its personal data "
          "is synthetic, from the generators the detector trained on, so it flatters. The real rows are annotated "
          "tweets and documents the detector never trained on: expect those figures on real text. Recall and "
          "precision count a span found when it shares at least half of the longer span with a gold span of the same "
          "type; character figures ignore the type.")
TEXTS = {"corpus.test": "corpus test split (demo: synthetic personal data)",
         "real.btc": "Broad Twitter Corpus test (real, never trained on)",
         "real.wnut17": "WNUT-17 test (real, never trained on)",
         "real.gum_test": "GUM test, 15 genres of documents (real, never trained on)",
         "real.gum_test2": "GENTLE test2, 8 genres GUM lacks: legal, medical ... (real, never trained on)"}


def detection_table(metrics: Mapping[str, float]) -> pd.DataFrame:
    """One row per (text, type) the metrics hold: overlap recall/precision, exact recall, support, and the
    text's character precision/recall (``detect`` stage keys ``corpus.test.*``, ``real.<corpus>.*``)."""
    rows = []
    for prefix, text in TEXTS.items():
        labels = sorted({key[len(prefix) + 1:].split(".")[0] for key in metrics
                         if key.startswith(f"{prefix}.") and key.endswith(".exact.support")
                         and key.count(".") == prefix.count(".") + 3})
        for label in labels:
            at = f"{prefix}.{label}"
            rows.append({"text": text, "type": label, "support": int(metrics[f"{at}.exact.support"]),
                         "recall": metrics[f"{at}.overlap.recall"], "precision": metrics[f"{at}.overlap.precision"],
                         "exact_recall": metrics[f"{at}.exact.recall"],
                         "char_precision": metrics[f"{prefix}.char.precision"],
                         "char_recall": metrics[f"{prefix}.char.recall"]})
    return pd.DataFrame(rows, columns=["text", "type", "support", "recall", "precision", "exact_recall",
                                       "char_precision", "char_recall"])


def protected_types_table(settings: Mapping[str, object]) -> pd.DataFrame:
    """Per privacy setting, whether it protects detected spans and which types (its ``labels``; all when
    null), beside the leaks-by-type table: what each setting protects, and so what it costs."""
    rows = []
    for name, setting in settings.items():
        stand_ins = getattr(setting, "stand_ins", None)  # a hybrid: these detected types get stand-ins
        detected = bool(getattr(setting, "mask_detected", False) or getattr(setting, "replace_detected", False)
                        or getattr(setting, "spans", "gold") in ("detected", "both") or stand_ins)
        labels = stand_ins or getattr(setting, "labels", None)
        rows.append({"setting": name, "mechanism": getattr(setting, "kind", ""), "protects_detected": detected,
                     "types": (", ".join(labels) if labels else "every type found") if detected else ""})
    return pd.DataFrame(rows, columns=["setting", "mechanism", "protects_detected", "types"])
