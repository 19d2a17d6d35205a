"""Shrink a params.yaml to CI's reduced demo: the same stages and settings, smaller sizes.

Every privacy setting of the shipped params.yaml is kept (two DataSifterText settings fetch the
fill-in model at once, as on a user's first run); only corpus and model sizes go down.
Usage: python .ci/reduce_params.py params.yaml
"""

from __future__ import annotations

import sys
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
REDUCED = {
    "ingest": {"demo": {"n_docs": 400}},
    "fill_in": {"vocab_size": 2000, "hidden_size": 64, "num_layers": 2, "num_heads": 2, "intermediate_size": 128,
                "epochs": 1.0},
    "indexes": {"geometry": {"draws": 100, "vocab_sample": 30}},
    # real_limit counts tweets (BTC, WNUT-17) and whole GUM documents (~5,000 characters each): 20 keeps the
    # detector's training text near what 500 tweets gave before GUM (143k characters, not 967k)
    "detectors": {"data": {"synthetic_docs": 500, "real_limit": 20}, "model": {"encoder_layers": 1, "epochs": 1},
                  "interests": {"synthetic_train": 300, "synthetic_test": 30, "epochs": 1, "encoder_layers": 1,
                                "max_len": 12}},
    # the transformer classifier is fine-tuned in the test suite's flows; here it would cost a minute of CI
    "evaluate": {"transformer": {"enabled": False}},
    "embedding_dp": {"sensitivity": {"max_words": 100}, "relevance": {"epochs": 50}},
}


def merge(base: dict, changes: dict) -> dict:
    out = dict(base)
    for key, value in changes.items():
        out[key] = merge(base.get(key) or {}, value) if isinstance(value, dict) else value
    return out


def main(path: str) -> None:
    params = Path(path)
    reduced = merge(yaml.safe_load(params.read_text(encoding="utf-8")), REDUCED)
    for source in reduced["indexes"]["sources"].values():
        source["dim"] = min(source.get("dim", 300), 64)
    # the fresh clone lives in a temporary folder: point the real corpora at this checkout's ../shared/data
    for key in ("wnut17_path", "btc_path", "gum_path"):
        value = reduced["detectors"]["data"].get(key)
        if value and not Path(value).is_absolute():
            reduced["detectors"]["data"][key] = str((REPO / value).resolve()) if (REPO / value).exists() else None
    params.write_text(yaml.safe_dump(reduced, sort_keys=False), encoding="utf-8")


if __name__ == "__main__":
    main(sys.argv[1])
