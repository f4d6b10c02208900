#!/usr/bin/env bash
# One training run on a lent GPU machine (the `device` tool), or the same on this CPU (--cpu).
#
# here:     bash training/gpu_recipe.sh pack --train T... [--bt B...] --dev D... [--spm M]
#             -> .device/recipe.tar.xz (xz; the device tool carries at most 64 MiB)
# device:   bash training/gpu_recipe.sh start [--cpu] [--minutes M] [-- TRAIN OPTIONS]
#             unpacks the carried data, trains in the background (setsid) with a wall-clock
#             budget; checkpoints and dev NLL land in $RECIPE_DIR/run (default /tmp/recipe)
#           bash training/gpu_recipe.sh wait [--seconds S]
#             prints the log tail every minute for up to S seconds (default 540); exit 0 once
#             training has finished, 3 while it is still running
#           bash training/gpu_recipe.sh collect OUT
#             the final weights in bf16, in <= 16 MiB safetensors files, with config, tokenizer,
#             metrics and the training curve (at most 8 files)
# here:     subctx-train export OUT --out BUNDLE --quantize int8
#
# A device session: carry .device, run `start` then `wait` (within one call: start; wait
# --seconds 540), more `wait` calls while the budget lasts, then `collect $OUT`.
set -euo pipefail
cd "$(dirname "$0")/.."
RECIPE_DIR=${RECIPE_DIR:-/tmp/recipe}
PACK=${PACK:-.device/recipe.tar.xz}
PY=${PYTHON:-python3}
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1

die() { echo "gpu_recipe: $*" >&2; exit 2; }

pack() {
    local stage; stage=$(mktemp -d)
    mkdir -p "$stage/data/train" "$stage/data/bt" "$stage/data/dev"
    local where=train
    while [ $# -gt 0 ]; do
        case $1 in
            --train) where=train ;; --bt) where=bt ;; --dev) where=dev ;;
            --spm) shift; cp "$1" "$stage/data/spm.model" ;;
            *) if [ -d "$1" ]; then cp "$1"/*.jsonl "$stage/data/$where/";
               else cp "$1" "$stage/data/$where/"; fi ;;
        esac
        shift
    done
    ls "$stage"/data/train/*.jsonl >/dev/null 2>&1 || die "pack: no --train data"
    mkdir -p "$(dirname "$PACK")"
    tar -C "$stage" -cf - data | xz -T2 -6 > "$PACK"
    rm -rf "$stage"
    local size; size=$(stat -c %s "$PACK")
    echo "packed $PACK: $((size / 1048576)) MiB"
    [ "$size" -le $((60 * 1048576)) ] || die "pack: $PACK is over 60 MiB; carry less data"
}

start() {
    local cpu=0 minutes="" preset=gpu-deep
    while [ $# -gt 0 ]; do
        case $1 in
            --cpu) cpu=1; preset=tiny ;;
            --minutes) shift; minutes=$1 ;;
            --preset) shift; preset=$1 ;;
            --) shift; break ;;
            *) die "start: unknown option $1" ;;
        esac
        shift
    done
    [ -n "$minutes" ] || minutes=$([ "$cpu" = 1 ] && echo 1 || echo 20)
    [ -f "$PACK" ] || die "start: $PACK not found (run pack here and carry .device)"
    mkdir -p "$RECIPE_DIR"
    rm -rf "$RECIPE_DIR/data" "$RECIPE_DIR/done"
    xz -dc "$PACK" | tar -C "$RECIPE_DIR" -xf -
    local data="$RECIPE_DIR/data" device=cuda
    [ "$cpu" = 1 ] && device=cpu
    local cmd=("$PY" -m training.cli train "$data/train")
    [ -n "$(ls -A "$data/bt" 2>/dev/null)" ] && cmd+=("$data/bt")
    for f in "$data"/dev/*.jsonl; do [ -e "$f" ] && cmd+=(--dev "$f"); done
    [ -f "$data/spm.model" ] && cmd+=(--spm "$data/spm.model")
    cmd+=(--run "$RECIPE_DIR/run" --preset "$preset" --device "$device"
          --budget-minutes "$minutes" "$@")
    [ "$cpu" = 1 ] || nvidia-smi --query-gpu=name,memory.total --format=csv,noheader || true
    {
        printf '%q ' "${cmd[@]}"
        printf '> %q 2>&1\necho $? > %q\n' "$RECIPE_DIR/train.log" "$RECIPE_DIR/done"
    } > "$RECIPE_DIR/train.sh"
    setsid bash "$RECIPE_DIR/train.sh" < /dev/null > /dev/null 2>&1 &
    echo "training started in the background ($preset on $device, $minutes min): $RECIPE_DIR"
}

wait_run() {
    local seconds=540
    [ "${1:-}" = --seconds ] && seconds=$2
    local until=$((SECONDS + seconds))
    while :; do
        if [ -f "$RECIPE_DIR/done" ]; then
            tail -n 5 "$RECIPE_DIR/train.log"
            local rc; rc=$(cat "$RECIPE_DIR/done")
            echo "training finished (exit $rc)"
            return "$rc"
        fi
        [ $SECONDS -ge $until ] && break
        local poll=${POLL:-60}
        sleep $((until - SECONDS < poll ? until - SECONDS : poll))
        tail -n 2 "$RECIPE_DIR/train.log" 2>/dev/null || true
    done
    echo "still training"
    return 3
}

collect() {
    local out=${1:?collect OUT}
    [ -f "$RECIPE_DIR/done" ] || die "collect: training has not finished"
    "$PY" -m training.cli collect "$RECIPE_DIR/run" --out "$out"
}

command=${1:-}
shift || true
case $command in
    pack) pack "$@" ;;
    start) start "$@" ;;
    wait) wait_run "$@" ;;
    collect) collect "$@" ;;
    *) sed -n '2,20p' "$0"; exit 2 ;;
esac
