#!/usr/bin/env bash
# Side-by-side comparison of every architecture on the same data and the same budget:
# baseline, concatenation (plain, +CD, +CD+shift), context encoder, capsule network.
#
#   bash training/compare.sh ../shared/data/en-ru runs/cmp 600 cpu-small
#
# Each model trains for STEPS updates of the preset's token batches (resumes if stopped), is
# exported to a bundle, and gets the dev report (with --context 0 and, for context models, the
# random-context control); the last step prints one table and writes it to RUNS/dev-table.md.
# Set EVAL_ONLY=1 to skip training (runs already there), BLEU_LIMIT / CTXPRO_LIMIT to shrink
# the dev sets, THREADS for CPU threads.
set -euo pipefail
DATA=${1:?data root (holding train/ and dev/)}
RUNS=${2:?folder for the runs}
STEPS=${3:-600}
PRESET=${4:-cpu-small}
THREADS=${THREADS:-2}
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

mkdir -p "$RUNS/bundles" "$RUNS/reports"
for name in "${ORDER[@]}"; do
  if [[ -z "${EVAL_ONLY:-}" ]]; then
    # shellcheck disable=SC2086
    subctx-train train "$DATA/train" "${DEV[@]}" --run "$RUNS/$name" --preset "$PRESET" \
      --max-steps "$STEPS" --threads "$THREADS" ${FLAGS[$name]}
  fi
  subctx-train export "$RUNS/$name" --out "$RUNS/bundles/$name" --quantize int8
  subctx-train dev-report "$RUNS/bundles/$name" --dev-root "$DATA/dev" --random-control \
    --bleu-limit "$BLEU_LIMIT" --ctxpro-limit "$CTXPRO_LIMIT" --threads "$THREADS" \
    --json "$RUNS/reports/$name.json"
done
REPORTS=()
for name in "${ORDER[@]}"; do REPORTS+=("$RUNS/reports/$name.json"); done
subctx-train dev-table "${REPORTS[@]}" --markdown "$RUNS/dev-table.md"
