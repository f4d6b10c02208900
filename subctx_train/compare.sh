#!/usr/bin/env bash
# Side-by-side comparison of every architecture on the same data and the same budget:
# baseline, concatenation (plain, +CD, +CD+shift), context encoder, capsule network.
#
#   bash subctx_train/compare.sh ../shared/data/en-ru runs/cmp 600 cpu-small
#   INIT=runs/base PARALLEL=2 bash subctx_train/compare.sh ../shared/data/en-ru runs/cmp 1500
#
# Each model trains for STEPS updates of the preset's token batches (resumes if stopped), is
# exported to a bundle, and gets the dev report (with --context 0 and, for context models, the
# random-context control); the last step prints one table and writes it to RUNS/dev-table.md.
#
# INIT=RUN: every model starts from that sentence-level run's weights and trains STEPS more
# updates (the baseline row simply goes on training), so all rows get the same pre-training and
# the same fine-tuning budget: the cheap way to compare context models when compute is short.
# PARALLEL=N: N models at a time (THREADS CPU threads each; default 2 / PARALLEL).
# EVAL_ONLY=1 skips training (runs already there); BLEU_LIMIT / CTXPRO_LIMIT shrink the dev sets.
set -euo pipefail
DATA=${1:?data root (holding train/ and dev/)}
RUNS=${2:?folder for the runs}
STEPS=${3:-600}
PRESET=${4:-cpu-small}
PARALLEL=${PARALLEL:-1}
THREADS=${THREADS:-$(( PARALLEL > 1 ? 1 : 2 ))}
BLEU_LIMIT=${BLEU_LIMIT:-400}
CTXPRO_LIMIT=${CTXPRO_LIMIT:-100}
DEV=(--dev "$DATA/dev/friends_dev.jsonl" --dev "$DATA/dev/flores_dev.jsonl")

declare -A FLAGS=(
  [baseline]="--architecture transformer"
  [concat-plain]="--architecture concat --cd-weight 1.0 --segment-shift 0"
  [concat-cd]="--architecture concat --cd-weight 0.01 --segment-shift 0"
  [concat-cd-shift]="--architecture concat --cd-weight 0.01 --segment-shift 16"
  [context_encoder]="--architecture context_encoder"
  [capsule]="--architecture capsule"
)
ORDER=(baseline concat-plain concat-cd concat-cd-shift context_encoder capsule)

START=()
MAX_STEPS=$STEPS
if [[ -n "${INIT:-}" ]]; then
  # the init run's step count: fine-tuning goes on from there (see `train --max-steps`)
  BASE_STEP=$(python3 -c "import sys; from subctx_train.runs import init_step; print(init_step(sys.argv[1]))" "$INIT")
  START=(--init-from "$INIT")
  MAX_STEPS=$(( BASE_STEP + STEPS ))
fi

one() {  # train, export and evaluate one row
  local name=$1 log="$RUNS/logs/$1.log"
  {
    if [[ -z "${EVAL_ONLY:-}" ]]; then
      # shellcheck disable=SC2086
      subctx-train train "$DATA/train" "${DEV[@]}" --run "$RUNS/$name" --preset "$PRESET" \
        --max-steps "$MAX_STEPS" --threads "$THREADS" "${START[@]}" ${FLAGS[$name]}
    fi
    subctx-train export "$RUNS/$name" --out "$RUNS/bundles/$name" --quantize int8
    subctx-train dev-report "$RUNS/bundles/$name" --dev-root "$DATA/dev" --random-control \
      --bleu-limit "$BLEU_LIMIT" --ctxpro-limit "$CTXPRO_LIMIT" --threads "$THREADS" \
      --json "$RUNS/reports/$name.json"
  } >"$log" 2>&1 && echo "done: $name" || { echo "FAILED: $name (see $log)"; return 1; }
}

mkdir -p "$RUNS/bundles" "$RUNS/reports" "$RUNS/logs"
failed=0
for name in "${ORDER[@]}"; do
  while (( $(jobs -rp | wc -l) >= PARALLEL )); do wait -n || failed=1; done
  echo "start: $name"
  one "$name" &
done
while (( $(jobs -rp | wc -l) > 0 )); do wait -n || failed=1; done

REPORTS=()
for name in "${ORDER[@]}"; do
  [[ -f "$RUNS/reports/$name.json" ]] && REPORTS+=("$RUNS/reports/$name.json")
done
subctx-train dev-table "${REPORTS[@]}" --markdown "$RUNS/dev-table.md"
exit $failed
