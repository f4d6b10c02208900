#!/usr/bin/env bash
# One training run on a lent GPU machine (the `device` tool), or the same on this CPU (--cpu).
#
# here:     bash subctx_train/gpu_recipe.sh park [--all]   (before a session's first call)
#             (--all: the shipped default and docs/ too)
#             the bundles of assets/models but the shipped default go to .device/parked: the
#             working tree a call copies is 24 MiB without them, 48 MiB with; `unpark` after
#             the session's last call puts them back (commit nothing in between)
#           bash subctx_train/gpu_recipe.sh pack --train T... [--bt B...] --dev D... [--spm M]
#             [--devroot shared/data/en-ru/dev] (for `report`)
#             -> .device/recipe.tar.xz: the documents as columns (pack-docs), xz -9; it and the
#             working tree must fit the 64 MiB a device call carries
#           bash subctx_train/gpu_recipe.sh pack-bt NAME B...
#             -> .device/bt-NAME.tar.xz ($DEVICE_DIR): synthetic documents that do not fit beside the main
#             pack, carried by a later call of the same session (`add-bt` there)
#           bash subctx_train/gpu_recipe.sh pack-mono MONO... [--known T...] [--skip-done B...]
#             -> .device/mono.tar.xz ($MONO_PACK): Russian documents to back-translate, less
#             the segments whose Russian has an English side in T and the documents in B
# device:   bash subctx_train/gpu_recipe.sh start [--cpu] [--minutes M] [--weights FILE]
#             [-- TRAIN OPTIONS]
#             unpacks the carried data, trains in the background (setsid) with a wall-clock
#             budget; checkpoints and dev NLL land in $RECIPE_DIR/run (default /tmp/recipe);
#             --weights: a weights file (subctx_train/configs/weights/) as --weight options
#           bash subctx_train/gpu_recipe.sh prepare
#             only unpacks the carried data (a first call whose carry is the main pack)
#           bash subctx_train/gpu_recipe.sh add-bt PACK
#             adds a pack-bt pack's documents to the unpacked back-translations (a later call,
#             on the same warm machine, carrying PACK; then `start`)
#           bash subctx_train/gpu_recipe.sh wait [--seconds S]
#             prints the log tail every minute for up to S seconds (default 540); exit 0 once
#             training has finished, 3 while it is still running
#           bash subctx_train/gpu_recipe.sh collect [--name NAME] [--latest] [--dtype D] OUT
#             the final weights in bf16, in <= 16 MiB safetensors files, with config, tokenizer,
#             metrics and the training curve (at most 8 files); --name: one of the `rows` runs;
#             --dtype int8: a scale per row (a model over ~30M parameters, in one call);
#             --latest: a run still training gives its newest checkpoint (a safety copy at the
#             end of a call, in case the next call finds the machine gone)
# here:     subctx-train export OUT --out BUNDLE --quantize int8
#
# A device session: carry .device, run `start` then `wait` (within one call: start; wait
# --seconds 540), then `collect $OUT` (the session verbs below do it in two calls).
#
# Several runs side by side on the one GPU (the comparison of the papers' systems):
# device:   bash subctx_train/gpu_recipe.sh start --name NAME [--no-bt] [--minutes M] [-- OPTS]
#             one run per name, in $RECIPE_DIR/runs/NAME, all in the background at once
#           bash subctx_train/gpu_recipe.sh rows [--cpu] [--steps N] [--minutes M] [--preset P]
#             [--from-embedded]  (every row fine-tunes the shipped model for N updates)
#             [--only NAME,NAME]  (just these rows; the GPU memory is shared among them)
#             starts the six rows of docs/comparison (same data, tokenizer and updates), a
#             source-only concatenation row (context at the speed of none: no prefix to wait
#             for), the back-translation / own-context ablations of docs/recipe.md and, when the
#             pack has own translations (`mt`), the shipped model fine-tuned on its own context
#             for as many updates (embedded-own; `collect --name embedded-own OUT` brings it back);
#             --only drafted,no-drafted: the campaign's weights with and without the
#             machine-drafted corpora (opt-in rows: they start only when --only names them)
#           bash subctx_train/gpu_recipe.sh wait [--seconds S]     (waits for every run)
#           bash subctx_train/gpu_recipe.sh report OUT [--bleu-limit N]
#             exports each finished run as a PyTorch bundle, runs dev-report on the GPU for
#             all of them (real, no and random context) and the attention analysis of the
#             context-aware encoder: OUT gets dev_report.json, metrics.json, attention/
#
# Device sessions of 15 minutes (docs/recipe.md "The device calls"): two calls back to back,
# each session's first call one verb; times are seconds from that call's start:
# device:   bash subctx_train/gpu_recipe.sh session-ruen OUT [-- TRAIN OPTIONS]
#             stage 0 (throughput of gpu-deep -> OUT/throughput-gpu-deep.json), then `rt` with
#             its fastest setting, ending at TRAIN_END (690); a safety copy in OUT/ruen
#           bash subctx_train/gpu_recipe.sh session-rows OUT [REPORT OPTIONS]
#             the comparison rows (ROWS_ONLY: issue 27's seven and the machine-drafted pair)
#             fine-tuned from the shipped model (with THROUGHPUT's speed options when set),
#             then `report` in the background; OUT gets what is done when the call ends
#           bash subctx_train/gpu_recipe.sh stash RUN   (a carried run folder kept as init)
#           bash subctx_train/gpu_recipe.sh session-big OUT [-- TRAIN OPTIONS]
#             stage 2: gpu-big on real + back-translated documents, the campaign's weights,
#             the control tags, THROUGHPUT's fastest setting (gpu-big's own rows where it
#             has them); a safety copy in int8; gpu-big's speed rows, measured while the run
#             loads its data, printed as one `SPEED-ROWS {json}` line for the next session
#           bash subctx_train/gpu_recipe.sh finish [--name NAME] [--dtype D] [--seconds S] OUT
#           bash subctx_train/gpu_recipe.sh finish-report OUT [SECONDS]
#             the second call: the run's (the report's) end, and what it made
#           bash subctx_train/gpu_recipe.sh films OUT [MODEL]
#             stage 4: the app on the GPU (bench/film_batch.py over the carried dev films,
#             with and without context; MODEL default the shipped bundle) -> OUT/film_batch.json
#
# Stage 1 (docs/recipe.md "Stage 1: all the data"): the Russian-to-English model, then the
# back-translation of ru-mono, in the background like the runs above (`wait` waits for them):
# device:   bash subctx_train/gpu_recipe.sh rt [--cpu] [--minutes M] [--weights FILE] [-- OPTS]
#             trains runs/ruen on the real pairs reversed (transformer; weights default
#             subctx_train/configs/weights/ruen-all.toml); `collect --name ruen OUT` brings it
#           bash subctx_train/gpu_recipe.sh bt [--cpu] [--model M] [--name NAME] [--sampling S]
#             [--beam N] [--batch-size N] [-- BACK-TRANSLATE OPTIONS]
#             back-translates the carried $MONO_PACK with M (a run folder, a PyTorch or a
#             CTranslate2 bundle: exported / unbundled to a PyTorch bundle first; default
#             runs/ruen) into bt/NAME (default: the sampling), resumably, tagged synthetic;
#             again with another MONO_PACK (a later call's part): a second run beside it
#           bash subctx_train/gpu_recipe.sh bt-collect [--name NAME] OUT
#             the documents finished so far, packed, xz -9, in <= 15 MiB parts (at most 8)
# here:     bash subctx_train/gpu_recipe.sh bt-unpack PARTS_DIR OUT
#             the parts back as OUT/NAME/*.jsonl, added to what OUT holds from earlier sessions
set -euo pipefail
cd "$(dirname "$0")/.."
RECIPE_DIR=${RECIPE_DIR:-/tmp/recipe}
PACK=${PACK:-.device/recipe.tar.xz}
MONO_PACK=${MONO_PACK:-.device/mono.tar.xz}
DEVICE_DIR=${DEVICE_DIR:-.device}  # where pack-bt writes
XZ=${XZ:--9}  # xz's preset for packs
PY=${PYTHON:-python3}
EMBEDDED=${EMBEDDED:-assets/models/en-ru}  # the shipped model (rows fine-tunes it)
MODELS=${MODELS:-assets/models}  # the bundles in the working tree (park, unpark)
DOCS=${DOCS:-docs}  # the documentation: nothing on the device reads it (park --all)
ENRU_WEIGHTS=subctx_train/configs/weights/enru-all.toml  # the campaign's corpus weights
OPT_IN_ROWS="drafted no-drafted concat-encoder"  # rows that start only when --only names them
# the shipped model's recipe: concatenation, context-discounted loss, no segment shift,
# noisy target context (the rows and stage 2 train it)
SHIPPED=(--architecture concat --cd-weight 0.01 --segment-shift 0 --noisy-context 0.3)
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
            --devroot) shift  # what dev-report reads: friends, flores, Voita, ctxpro
                mkdir -p "$stage/data/devroot/voita"
                cp "$1"/friends_dev.jsonl "$1"/flores_dev.jsonl "$stage/data/devroot/"
                cp -r "$1/voita/mjpost" "$stage/data/devroot/voita/"
                cp -r "$1/ctxpro" "$stage/data/devroot/" ;;
            *) if [ -d "$1" ]; then cp "$1"/*.jsonl "$stage/data/$where/";
               else cp "$1" "$stage/data/$where/"; fi ;;
        esac
        shift
    done
    ls "$stage"/data/train/*.jsonl >/dev/null 2>&1 || die "pack: no --train data"
    local part
    for part in train bt dev; do  # documents as columns: xz packs them far tighter
        ls "$stage/data/$part"/*.jsonl >/dev/null 2>&1 || continue
        "$PY" -m subctx_train.cli pack-docs "$stage/data/$part" \
            --out "$stage/data/$part.pack" > /dev/null
        rm -rf "$stage/data/$part"
    done
    write_pack "$stage" data "$PACK"
    rm -rf "$stage"
}

write_pack() {
    # write_pack DIR NAME ARCHIVE: DIR/NAME as tar + xz; it and the working tree must fit
    # the 64 MiB a device call carries
    mkdir -p "$(dirname "$3")"
    tar -C "$1" -cf - "$2" | xz -T2 "$XZ" > "$3"
    local size tree
    size=$(stat -c %s "$3")
    tree=$(tree_bytes)
    echo "packed $3: $(mib "$size") MiB (the working tree: $(mib "$tree") MiB)"
    [ $((size + tree)) -le $((64 * 1048576)) ] \
        || die "pack: $3 and the working tree are over 64 MiB; carry less data"
}

mib() { awk -v b="$1" 'BEGIN { printf "%.1f", b / 1048576 }'; }

tree_bytes() {
    # the bytes of the tracked files in the working tree (what a device call copies); a
    # tracked file that is not there (a parked bundle) counts nothing and fails nothing
    { git ls-files -z 2>/dev/null | xargs -0 stat -c %s 2>/dev/null || true; } \
        | awk '{ s += $1 } END { print s + 0 }'
}

park() {
    # park [--all]: every bundle in $MODELS but the shipped default ($EMBEDDED) out of the
    # working tree, into $DEVICE_DIR/parked: a device call copies the tree, and the packs fit
    # beside it only without them; --all: the default too (a session that neither fine-tunes
    # nor translates with it: the bigger model's, whose weights travel beside the data) and
    # $DOCS (0.6 MiB that stage 2's pack needs more than the device does)
    local all=0
    [ "${1:-}" = --all ] && all=1
    mkdir -p "$DEVICE_DIR/parked"
    if [ "$all" = 1 ] && [ -d "$DOCS" ]; then
        [ -e "$DEVICE_DIR/parked-docs" ] && die "park: $DEVICE_DIR/parked-docs is there already"
        mv "$DOCS" "$DEVICE_DIR/parked-docs"
        echo "parked $DOCS"
    fi
    local bundle name
    for bundle in "$MODELS"/*/; do
        bundle=${bundle%/}; name=$(basename "$bundle")
        [ "$all" = 0 ] && [ "$name" = "$(basename "$EMBEDDED")" ] && continue
        [ -e "$DEVICE_DIR/parked/$name" ] && die "park: $DEVICE_DIR/parked/$name is there already"
        mv "$bundle" "$DEVICE_DIR/parked/"
        echo "parked $bundle"
    done
    echo "the working tree: $(mib "$(tree_bytes)") MiB; after the session: unpark (commit nothing before)"
}

unpark() {
    # unpark: the parked bundles back into $MODELS (and $DOCS where park --all took it)
    local bundle name
    if [ -d "$DEVICE_DIR/parked-docs" ]; then
        [ -e "$DOCS" ] && die "unpark: $DOCS is there already"
        mv "$DEVICE_DIR/parked-docs" "$DOCS"
        echo "back: $DOCS"
    fi
    for bundle in "$DEVICE_DIR"/parked/*/; do
        [ -d "$bundle" ] || continue
        bundle=${bundle%/}; name=$(basename "$bundle")
        [ -e "$MODELS/$name" ] && die "unpark: $MODELS/$name is there already"
        mv "$bundle" "$MODELS/"
        echo "back: $MODELS/$name"
    done
}

pack_bt() {
    # pack-bt NAME B...: synthetic documents as their own pack, for a second carry
    local name=${1:-}; shift || true
    [ -n "$name" ] && [ $# -gt 0 ] || die "pack-bt: give a NAME and the documents"
    local stage; stage=$(mktemp -d)
    "$PY" -m subctx_train.cli pack-docs "$@" --out "$stage/bt-$name/bt.pack" > /dev/null
    write_pack "$stage" "bt-$name" "$DEVICE_DIR/bt-$name.tar.xz"
    rm -rf "$stage"
}

add_bt() {
    # add-bt PACK: its documents join the unpacked back-translations, once per machine
    local archive=${1:-}
    [ -f "$archive" ] || die "add-bt: $archive not found (run pack-bt here and carry it)"
    [ -f "$RECIPE_DIR/data/.unpacked" ] || die "add-bt: nothing unpacked yet (prepare first)"
    local name; name=$(basename "$archive" .tar.xz)
    local mark="$RECIPE_DIR/data/.added-$name"
    if [ -f "$mark" ]; then echo "$name: added already"; return 0; fi
    local stage; stage=$(mktemp -d)
    xz -dc "$archive" | tar -C "$stage" -xf -
    unpack_docs "$stage/$name"
    local f n=0
    for f in "$stage/$name"/bt/*.jsonl; do
        [ -e "$f" ] || continue
        mv "$f" "$RECIPE_DIR/data/bt/$name-$(basename "$f")"
        n=$((n + 1))
    done
    rm -rf "$stage"
    touch "$mark"
    echo "$name: $n file(s) added to $RECIPE_DIR/data/bt"
}

pack_mono() {
    # pack-mono MONO... [--known T...] [--skip-done B...]: Russian documents to back-translate
    local stage; stage=$(mktemp -d)
    local inputs=() opts=() where=in
    while [ $# -gt 0 ]; do
        case $1 in
            --known) where=known ;; --skip-done) where=done ;;
            *) case $where in
                   in) inputs+=("$1") ;;
                   known) opts+=(--known "$1") ;;
                   done) opts+=(--skip-done "$1") ;;
               esac ;;
        esac
        shift
    done
    [ ${#inputs[@]} -gt 0 ] || die "pack-mono: no Russian documents given"
    "$PY" -m subctx_train.cli pack-docs "${inputs[@]}" "${opts[@]}" --out "$stage/mono"
    write_pack "$stage" mono "$MONO_PACK"
    rm -rf "$stage"
}

unpack_docs() {
    # the carried packs' documents back as .jsonl: DIR/NAME.pack -> DIR/NAME/*.jsonl
    local pack
    for pack in "$1"/*.pack; do
        [ -d "$pack" ] || continue
        "$PY" -m subctx_train.cli unpack-docs "$pack" --out "${pack%.pack}" > /dev/null
        rm -rf "$pack"
    done
}

unpack() {
    # once per machine: runs started side by side share the unpacked data; a later call of
    # the session (the machine still warm) finds it unpacked and need not carry the pack
    [ -f "$RECIPE_DIR/data/.unpacked" ] && return 0
    [ -f "$PACK" ] || die "start: $PACK not found (run pack here and carry .device)"
    mkdir -p "$RECIPE_DIR"
    rm -rf "$RECIPE_DIR/data"
    xz -dc "$PACK" | tar -C "$RECIPE_DIR" -xf -
    unpack_docs "$RECIPE_DIR/data"
    mkdir -p "$RECIPE_DIR/data/train" "$RECIPE_DIR/data/bt" "$RECIPE_DIR/data/dev"
    touch "$RECIPE_DIR/data/.unpacked"
}

start() {
    local cpu=0 minutes="" preset=gpu-deep name="" bt=1 weights=()
    while [ $# -gt 0 ]; do
        case $1 in
            --cpu) cpu=1; preset=tiny ;;
            --minutes) shift; minutes=$1 ;;
            --preset) shift; preset=$1 ;;
            --name) shift; name=$1 ;;
            --no-bt) bt=0 ;;
            --weights) shift  # a weights file as --weight options (those after -- win)
                read -ra weights <<< "$("$PY" -m subctx_train.cli weight-flags "$1")" ;;
            --) shift; break ;;
            *) die "start: unknown option $1" ;;
        esac
        shift
    done
    [ -n "$minutes" ] || minutes=$([ "$cpu" = 1 ] && echo 1 || echo 20)
    unpack
    local data="$RECIPE_DIR/data" device=cuda run="$RECIPE_DIR/run" done="$RECIPE_DIR/done"
    if [ -n "$name" ]; then
        run="$RECIPE_DIR/runs/$name"; done="$RECIPE_DIR/runs/$name.done"
        mkdir -p "$RECIPE_DIR/runs"
    fi
    rm -f "$done"
    [ "$cpu" = 1 ] && device=cpu
    local cmd=("$PY" -m subctx_train.cli train "$data/train")
    [ "$bt" = 1 ] && [ -n "$(ls -A "$data/bt" 2>/dev/null)" ] && cmd+=("$data/bt")
    for f in "$data"/dev/*.jsonl; do [ -e "$f" ] && cmd+=(--dev "$f"); done
    [ -f "$data/spm.model" ] && cmd+=(--spm "$data/spm.model")
    cmd+=(--run "$run" --preset "$preset" --device "$device"
          --budget-minutes "$minutes" "${weights[@]}" "$@")
    [ "$cpu" = 1 ] || nvidia-smi --query-gpu=name,memory.total --format=csv,noheader || true
    {
        printf '%q ' "${cmd[@]}"
        printf '> %q 2>&1\necho $? > %q\n' "$run.log" "$done"
    } > "$run.sh"
    setsid bash "$run.sh" < /dev/null > /dev/null 2>&1 &
    echo "training started in the background ($preset on $device, $minutes min): $run"
}

rows() {
    local steps=2000 minutes=15 preset=gpu-deep cpu=() from_embedded=0 only=""
    while [ $# -gt 0 ]; do
        case $1 in
            --cpu) cpu=(--cpu); preset=tiny ;;
            --steps) shift; steps=$1 ;;
            --minutes) shift; minutes=$1 ;;
            --preset) shift; preset=$1 ;;
            --from-embedded) from_embedded=1 ;;
            --only) shift; only=$1 ;;
            *) die "rows: unknown option $1" ;;
        esac
        shift
    done
    unpack
    # the shipped model's weights (from the bundle in the working tree: nothing to carry);
    # a run started from them goes on from its step count
    local init="$RECIPE_DIR/embedded" start_step=0 from=()
    "$PY" -m subctx_train.cli unbundle "$EMBEDDED" --out "$init" > /dev/null
    local embedded_step
    embedded_step=$("$PY" -c 'import sys; from subctx_train.runs import init_step; print(init_step(sys.argv[1]))' \
        "$init")
    if [ "$from_embedded" = 1 ]; then  # every row fine-tunes the one GPU-trained model
        from=(--init-from "$init"); start_step=$embedded_step
    fi
    # the speed options S1 measured (THROUGHPUT), the same for every row: updates as before
    local speed=()
    read -ra speed <<< "$(measured_flags "$minutes")"
    local same=(--max-k 1 --max-steps $((start_step + steps)) --threads 2 "${from[@]}"
                "${speed[@]}")
    local opts=("${cpu[@]}" --minutes "$minutes" --preset "$preset")
    # count the wanted rows first: the runs share the one GPU's memory equally
    ROWS_WANTED=0
    ROW_MODE=count row_list
    [ "$ROWS_WANTED" -gt 0 ] || die "rows: no row matches --only $only"
    export SUBCTX_GPU_SHARE
    SUBCTX_GPU_SHARE=$(awk -v n="$ROWS_WANTED" 'BEGIN { printf "%.2f", 0.88 / n }')
    echo "$ROWS_WANTED runs, each capped at $SUBCTX_GPU_SHARE of the GPU memory"
    ROW_MODE=start row_list
}

row() {
    # row NAME [start options] -- TRAIN OPTIONS: one run of `rows`, unless --only leaves it out
    local name=$1; shift
    if [ -n "$only" ] && [[ ",$only," != *",$name,"* ]]; then return 0; fi
    if [ -z "$only" ] && [[ " $OPT_IN_ROWS " == *" $name "* ]]; then return 0; fi
    if [ "$ROW_MODE" = count ]; then ROWS_WANTED=$((ROWS_WANTED + 1)); return 0; fi
    start --name "$name" "$@"
}

row_list() {
    # the six systems of docs/comparison: same data, tokenizer and number of updates
    row baseline "${opts[@]}" -- --architecture transformer "${same[@]}"
    row concat-plain "${opts[@]}" -- --architecture concat --cd-weight 1 \
        --segment-shift 0 "${same[@]}"
    row concat-cd "${opts[@]}" -- --architecture concat --cd-weight 0.01 \
        --segment-shift 0 "${same[@]}"
    row concat-cd-shift "${opts[@]}" -- --architecture concat --cd-weight 0.01 \
        --segment-shift 16 "${same[@]}"
    row context-encoder "${opts[@]}" -- --architecture context_encoder "${same[@]}"
    row capsule "${opts[@]}" -- --architecture capsule "${same[@]}"
    # issue 18: the previous line on the source side only (sKto1): no cue waits for another
    row concat-src "${opts[@]}" -- --architecture concat --target-context none \
        --segment-shift 0 "${same[@]}"
    # stop 39: the previous translation read by the encoder, not forced as a prefix (K = 3
    # would then cost ~1.5x no context in the app, not 2.2x): does it learn to read it there?
    # (opt-in: a 2-core fine-tune of 893 updates did not)
    row concat-encoder "${opts[@]}" -- --architecture concat --cd-weight 0.01 \
        --target-context encoder --segment-shift 0 "${same[@]}"
    # docs/recipe.md: the embedded model's recipe with and without back-translation (from
    # scratch only: a model already trained on back-translations cannot show what they add)
    local recipe=("${SHIPPED[@]}" --weight subtitles=2 --weight dialogue=1.5 --weight news=0.5)
    if [ "$from_embedded" = 0 ]; then
        row recipe "${opts[@]}" -- "${recipe[@]}" --weight synthetic=0.5 "${same[@]}"
        row recipe-no-bt --no-bt "${opts[@]}" -- "${recipe[@]}" "${same[@]}"
    fi
    # stage 1: do the machine-drafted corpora help? The campaign's corpus weights with and
    # without them, same updates (opt-in: only when --only names them)
    local all_weights
    read -ra all_weights <<< "$("$PY" -m subctx_train.cli weight-flags "$ENRU_WEIGHTS")"
    row drafted "${opts[@]}" -- "${SHIPPED[@]}" "${all_weights[@]}" "${same[@]}"
    row no-drafted "${opts[@]}" -- "${SHIPPED[@]}" "${all_weights[@]}" \
        --weight machine-drafted=0 "${same[@]}"
    if grep -q '"mt"' "$RECIPE_DIR"/data/train/*.jsonl 2>/dev/null; then
        [ "$from_embedded" = 0 ] && row recipe-own "${opts[@]}" -- "${recipe[@]}" \
            --weight synthetic=0.5 --own-context 0.5 "${same[@]}"
        # issue 12: the shipped model itself, trained on as many updates more on its own context
        row embedded-own "${opts[@]}" -- "${recipe[@]}" --weight synthetic=0.5 \
            --own-context 0.5 --init-from "$init" --max-k 1 --threads 2 \
            --max-steps $((embedded_step + steps))
    fi
    return 0
}

all_done() {
    # every started run has its done file (the single run's, or each named one's)
    local script
    for script in "$RECIPE_DIR"/run.sh "$RECIPE_DIR"/runs/*.sh; do
        [ -e "$script" ] || continue
        local base=${script%.sh}
        if [ "$base" = "$RECIPE_DIR/run" ]; then
            [ -f "$RECIPE_DIR/done" ] || return 1
        else
            [ -f "$base.done" ] || return 1
        fi
    done
}

wait_run() {
    local seconds=540
    [ "${1:-}" = --seconds ] && seconds=$2
    local until=$((SECONDS + seconds))
    while :; do
        if all_done; then
            local log rc=0
            for log in "$RECIPE_DIR"/run.log "$RECIPE_DIR"/runs/*.log; do
                [ -e "$log" ] || continue
                echo "== $log"; tail -n 3 "$log"
            done
            for f in "$RECIPE_DIR"/done "$RECIPE_DIR"/runs/*.done; do
                [ -e "$f" ] && [ "$(cat "$f")" != 0 ] && rc=$(cat "$f")
            done
            echo "training finished (exit $rc)"
            return "$rc"
        fi
        [ $SECONDS -ge $until ] && break
        local poll=${POLL:-60}
        sleep $((until - SECONDS < poll ? until - SECONDS : poll))
        for log in "$RECIPE_DIR"/run.log "$RECIPE_DIR"/runs/*.log; do
            [ -e "$log" ] && { echo "== $log"; tail -n 1 "$log"; }
        done
    done
    echo "still training"
    return 3
}

collect() {
    local run="$RECIPE_DIR/run" done="$RECIPE_DIR/done" latest=() dtype=bf16
    while [ $# -gt 1 ]; do
        case $1 in
            --name) shift; run="$RECIPE_DIR/runs/$1"; done="$RECIPE_DIR/runs/$1.done" ;;
            --latest) latest=(--latest) ;;
            --dtype) shift; dtype=$1 ;;
            *) break ;;
        esac
        shift
    done
    local out=${1:?collect [--name NAME] [--latest] [--dtype D] OUT}
    if [ ! -f "$done" ] && [ ${#latest[@]} = 0 ]; then
        die "collect: training has not finished (--latest: its newest checkpoint)"
    fi
    "$PY" -m subctx_train.cli collect "$run" --out "$out" --dtype "$dtype" "${latest[@]}"
}

report() {
    local out=${1:?report OUT}; shift
    local device=cuda
    [ "${CPU:-0}" = 1 ] && device=cpu
    local bundles=() name run
    mkdir -p "$RECIPE_DIR/bundles" "$RECIPE_DIR/reports" "$out"
    # the training curves first: a report cut short by the end of a call still has them
    "$PY" - "$RECIPE_DIR/runs" "$out/metrics.json" <<'PY'
import json, sys
from pathlib import Path
runs = Path(sys.argv[1])
metrics = {p.parent.name: [json.loads(line) for line in p.read_text().splitlines() if line]
           for p in sorted(runs.glob("*/metrics.jsonl"))}
Path(sys.argv[2]).write_text(json.dumps(metrics))
PY
    for run in "$RECIPE_DIR"/runs/*/; do
        run=${run%/}; name=$(basename "$run")
        [ -f "$run/final.safetensors" ] || { echo "report: $name has no final weights"; continue; }
        "$PY" -m subctx_train.cli export "$run" --out "$RECIPE_DIR/bundles/$name" --backend torch
        bundles+=("$name")
    done
    [ ${#bundles[@]} -gt 0 ] || die "report: no finished run"
    for name in "${bundles[@]}"; do  # side by side, one process per model
        "$PY" -m subctx_train.cli dev-report "$RECIPE_DIR/bundles/$name" --device "$device" \
            --dev-root "$RECIPE_DIR/data/devroot" --random-control "$@" \
            --json "$RECIPE_DIR/reports/$name.json" > "$RECIPE_DIR/reports/$name.log" 2>&1 &
    done
    wait
    "$PY" -m subctx_train.cli dev-table "$RECIPE_DIR"/reports/*.json --json "$out/dev_report.json"
    if [ -f "$RECIPE_DIR/runs/context-encoder/final.safetensors" ]; then
        "$PY" -m subctx_train.cli analyze-attention "$RECIPE_DIR/runs/context-encoder" \
            --data "$RECIPE_DIR/data/devroot/friends_dev.jsonl" --out "$out/attention" || true
    fi
    ls -la "$out"
}

rt() {
    # the Russian-to-English model of stage 1: every real pair reversed, sentence-level
    local opts=() weights=subctx_train/configs/weights/ruen-all.toml
    while [ $# -gt 0 ]; do
        case $1 in
            --cpu) opts+=(--cpu) ;;
            --minutes) shift; opts+=(--minutes "$1") ;;
            --preset) shift; opts+=(--preset "$1") ;;
            --weights) shift; weights=$1 ;;
            --) shift; break ;;
            *) die "rt: unknown option $1" ;;
        esac
        shift
    done
    start --name ruen --no-bt --weights "$weights" "${opts[@]}" -- \
        --direction ru-en --architecture transformer "$@"
}

bt() {
    local cpu=0 model="$RECIPE_DIR/runs/ruen" name="" sampling=beam beam=4 batch=512
    while [ $# -gt 0 ]; do
        case $1 in
            --cpu) cpu=1; batch=16 ;;
            --model) shift; model=$1 ;;
            --name) shift; name=$1 ;;
            --sampling) shift; sampling=$1 ;;
            --beam) shift; beam=$1 ;;
            --batch-size) shift; batch=$1 ;;
            --) shift; break ;;
            *) die "bt: unknown option $1" ;;
        esac
        shift
    done
    [ -n "$name" ] || name=$sampling
    local device=cuda
    [ "$cpu" = 1 ] && device=cpu
    # the Russian documents of this pack, once per machine ($MONO_PACK may be one of several
    # parts, carried by different calls: each is back-translated by a run of its own)
    [ -f "$MONO_PACK" ] || die "bt: $MONO_PACK not found (run pack-mono here and carry it)"
    local part; part=$(basename "$MONO_PACK" .tar.xz)
    local mono="$RECIPE_DIR/$part"
    mkdir -p "$RECIPE_DIR/runs" "$RECIPE_DIR/bt" "$RECIPE_DIR/bundles"
    if [ ! -f "$mono/.unpacked" ]; then
        rm -rf "$mono" "$mono.pack"
        mkdir -p "$mono.pack"
        xz -dc "$MONO_PACK" | tar -C "$mono.pack" -xf -
        "$PY" -m subctx_train.cli unpack-docs "$mono.pack/mono" --out "$mono" > /dev/null
        rm -rf "$mono.pack"
        touch "$mono/.unpacked"
    fi
    # a PyTorch bundle of the model (the GPU machine has no ctranslate2), once per machine
    local bundle; bundle="$RECIPE_DIR/bundles/$(basename "$model")-torch"
    if [ ! -f "$bundle/subctx.json" ]; then
        [ -e "$model" ] || die "bt: no model at $model (train one with rt, or carry a bundle)"
        if [ -f "$model/subctx.json" ] && grep -q '"backend": "torch"' "$model/subctx.json"; then
            bundle=$model
        elif [ -f "$model/subctx.json" ]; then  # CTranslate2 (int8 carries in half the room)
            local unbundled="$RECIPE_DIR/unbundled-$(basename "$model")"
            "$PY" -m subctx_train.cli unbundle "$model" --out "$unbundled" > /dev/null
            "$PY" -m subctx_train.cli export "$unbundled" --out "$bundle" --backend torch \
                > /dev/null
        else
            [ -f "$model/final.safetensors" ] || [ -d "$model/checkpoints" ] \
                || die "bt: $model is neither a bundle nor a run folder"
            "$PY" -m subctx_train.cli export "$model" --out "$bundle" --backend torch > /dev/null
        fi
    fi
    local run="$RECIPE_DIR/runs/bt-$name-$part" done="$RECIPE_DIR/runs/bt-$name-$part.done"
    rm -f "$done"
    local cmd=("$PY" -m subctx_train.cli back-translate "$mono" --model "$bundle"
               --out "$RECIPE_DIR/bt/$name" --device "$device" --sampling "$sampling"
               --beam "$beam" --batch-size "$batch" "$@")
    {
        printf '%q ' "${cmd[@]}"
        printf '> %q 2>&1\necho $? > %q\n' "$run.log" "$done"
    } > "$run.sh"
    setsid bash "$run.sh" < /dev/null > /dev/null 2>&1 &
    echo "back-translation started in the background ($sampling, beam $beam, batches of" \
         "$batch on $device): $RECIPE_DIR/bt/$name"
}

bt_collect() {
    local name=beam
    if [ "${1:-}" = --name ]; then name=$2; shift 2; fi
    local out=${1:?bt-collect [--name NAME] OUT} dir="$RECIPE_DIR/bt/$name"
    ls "$dir"/*.jsonl > /dev/null 2>&1 || die "bt-collect: nothing back-translated in $dir"
    local stage; stage=$(mktemp -d)
    mkdir -p "$stage/finished" "$out"
    local f
    for f in "$dir"/*.jsonl; do  # complete lines only: the run may still be writing
        "$PY" -c 'import sys; d = open(sys.argv[1], "rb").read()
open(sys.argv[2], "wb").write(d[:d.rfind(b"\n") + 1])' "$f" "$stage/finished/$(basename "$f")"
    done
    "$PY" -m subctx_train.cli pack-docs "$stage/finished" --out "$stage/bt-$name"
    tar -C "$stage" -cf - "bt-$name" | xz -T2 "$XZ" | split -b 15M -d -a 1 - \
        "$out/bt-$name.tar.xz.part"
    rm -rf "$stage"
    local parts; parts=$(ls "$out"/bt-"$name".tar.xz.part* | wc -l)
    ls -la "$out"
    [ "$parts" -le 8 ] || die "bt-collect: $parts parts; at most 8 files come back"
}

bt_unpack() {
    # here: the parts of bt-collect back as OUT/NAME/*.jsonl; documents OUT has are kept
    local parts=${1:?bt-unpack PARTS_DIR OUT} out=${2:?bt-unpack PARTS_DIR OUT}
    local found=0 first name stage
    for first in "$parts"/bt-*.tar.xz.part0; do
        [ -e "$first" ] || continue
        found=1
        name=$(basename "${first%.tar.xz.part0}")  # bt-NAME
        stage=$(mktemp -d)
        cat "${first%0}"* | xz -dc | tar -C "$stage" -xf -
        "$PY" -m subctx_train.cli unpack-docs "$stage/$name" --out "$stage/new" > /dev/null
        mkdir -p "$out/${name#bt-}"
        "$PY" - "$stage/new" "$out/${name#bt-}" <<'PY'
import json, sys
from pathlib import Path
new, out = Path(sys.argv[1]), Path(sys.argv[2])
for f in sorted(new.glob("*.jsonl")):
    target = out / f.name
    have = set()
    if target.exists():
        have = {json.loads(line)["doc"] for line in target.read_text(encoding="utf-8").splitlines()
                if line.strip()}
    lines = [line for line in f.read_text(encoding="utf-8").splitlines()
             if line.strip() and json.loads(line)["doc"] not in have]
    with open(target, "a", encoding="utf-8") as handle:
        handle.writelines(line + "\n" for line in lines)
    print(f"{target}: {len(lines)} documents added, {len(have)} were there")
PY
        rm -rf "$stage"
    done
    [ "$found" = 1 ] || die "bt-unpack: no bt-*.tar.xz.part0 in $parts"
}

# -- device sessions of 15 minutes ----------------------------------------------------------
# A session is two calls: the first (timeout_s 590) starts the work in the background, waits
# (a run that stops with an error starts once more without the measured settings) and ends
# with a safety copy in OUT; the second, sent at once (the machine
# goes back 30 s after a call), is `finish`: the run's end and its final weights. Times are
# seconds from the start of the first call's command (bash's SECONDS), tunable for tests.
CALL_SECONDS=${CALL_SECONDS:-545}   # the first call collects then (its timeout is 590)
TRAIN_END=${TRAIN_END:-690}         # training over, final weights written (in the second call)
RESERVE=${RESERVE:-150}             # data loading before the budget starts, averaging after
CHECK=${CHECK:-100}                 # when session-rows first looks for a row that died
THROUGHPUT_SECONDS=${THROUGHPUT_SECONDS:-200}
THROUGHPUT_OPTS=${THROUGHPUT_OPTS:---max-tokens 24000 --steps 30 --warmup 10 --examples 30000}
BIG_PRESET=${BIG_PRESET:-gpu-big}

minutes_until() {
    # the training budget (minutes) for a run started now to be over at $1 seconds
    awk -v end="$1" -v now="$SECONDS" -v r="$RESERVE" \
        'BEGIN { m = (end - now - r) / 60; printf "%.1f", m < 0.5 ? 0.5 : m }'
}

check_logs() {
    # after CHECK seconds: 1 if a run has died (its log tail says why)
    sleep "$CHECK"
    local bad
    bad=$(grep -lE 'Traceback|[A-Za-z]Error:' "$RECIPE_DIR"/runs/*.log "$RECIPE_DIR"/run.log \
          2>/dev/null || true)
    [ -z "$bad" ] && return 0
    for log in $bad; do echo "== $log"; tail -n 30 "$log"; done
    return 1
}

watch_run() {
    # watch_run RUN_DIR VERB OPTIONS...: wait for the run until CALL_SECONDS; one that stops
    # with an error (a speed setting this GPU cannot run, say) starts once more from scratch
    # with VERB OPTIONS (the same run without the measured settings) and the time left
    local dir=$1 rc=0; shift
    wait_run --seconds $((CALL_SECONDS - SECONDS)) || rc=$?
    [ "$rc" = 0 ] || [ "$rc" = 3 ] && return 0
    echo "the run stopped (exit $rc): once more without the measured settings"
    tail -n 20 "$dir.log" || true
    rm -rf "$dir"
    "$1" --minutes "$(minutes_until "$TRAIN_END")" "${@:2}"
    wait_run --seconds $((CALL_SECONDS - SECONDS)) || true
}

cpu_flag() { [ "${CPU:-0}" = 1 ] && echo --cpu || true; }

measured_flags() {
    # measured_flags MINUTES [PRESET]: the speed options of THROUGHPUT (a report a session
    # brought back, carried) for a run of MINUTES: PRESET's own rows, its batch size included,
    # where the report has them, else gpu-deep's without its batch; nothing without a report
    [ -n "${THROUGHPUT:-}" ] || return 0
    local own=""
    [ -n "${2:-}" ] && own=$("$PY" -m subctx_train.cli throughput-flags "$THROUGHPUT" \
        --preset "$2" --run-minutes "$1")
    if [ -n "$own" ]; then echo "$own"; return 0; fi
    "$PY" -m subctx_train.cli throughput-flags "$THROUGHPUT" --preset gpu-deep \
        --run-minutes "$1" --no-batch
}

speed_rows() {
    # speed_rows PRESET REPORT: PRESET's speed rows (no-sync, then larger batches) measured
    # while a run loads its data and the GPU would wait; SPEED_ROWS_SECONDS (0: none) bounds
    # them. The next session carries REPORT as THROUGHPUT.
    local seconds=${SPEED_ROWS_SECONDS:-80}
    [ "$seconds" -gt 0 ] || return 0
    timeout "$seconds" "$PY" -m subctx_train.cli throughput --preset "$1" --setting no-sync \
        --max-tokens "${SPEED_ROWS_TOKENS:-24000,48000}" --steps 20 --warmup 5 \
        --examples 20000 --budget-seconds $((seconds * 2 / 3)) --json "$2" > "$2.log" 2>&1 \
        || true
}

print_rows() {
    # print_rows REPORT: the report's rows on one line (a call brings back 8 files, and stage
    # 2's weights fill them): here, `grep '^SPEED-ROWS ' | cut -c12-` makes it a report again
    [ -f "$1" ] || { echo "speed rows: none (see $1.log)"; return 0; }
    "$PY" -c 'import json, sys
rows = json.load(open(sys.argv[1])).get("rows", [])
print("SPEED-ROWS " + json.dumps({"rows": rows}, separators=(",", ":")))' "$1"
}

session_ruen() {
    # S1, first call: stage 0 (the trainer's speed settings, measured here) and the
    # Russian-to-English model with the fastest of them; OUT/throughput-PRESET.json, the
    # safety copy in OUT/ruen; then `finish --name ruen OUT`
    local out=${1:?session-ruen OUT [-- TRAIN OPTIONS]} preset=gpu-deep cpu; shift
    [ "${1:-}" = -- ] && shift
    cpu=$(cpu_flag)
    [ -n "$cpu" ] && preset=tiny
    mkdir -p "$out"
    local report="$out/throughput-$preset.json"
    unpack &  # the data unpacks on the host while the GPU measures
    local unpacking=$!
    # shellcheck disable=SC2086  # THROUGHPUT_OPTS is a list of options
    timeout "$THROUGHPUT_SECONDS" "$PY" -m subctx_train.cli throughput --preset "$preset" \
        $THROUGHPUT_OPTS --budget-seconds $((THROUGHPUT_SECONDS * 2 / 3)) --json "$report" \
        --architecture concat --max-k 1 --cd-weight 0.01 --segment-shift 0 2>&1 \
        | tail -n 16 || echo "throughput: cut short; the rows so far stand"
    wait "$unpacking"
    local minutes flags
    minutes=$(minutes_until "$TRAIN_END")
    read -ra flags <<< "$("$PY" -m subctx_train.cli throughput-flags "$report" \
        --preset "$preset" --run-minutes "$minutes")"
    echo "ruen: $minutes min with ${flags[*]:-the preset settings}"
    rt $cpu --minutes "$minutes" -- "${flags[@]}" "$@"
    watch_run "$RECIPE_DIR/runs/ruen" rt $cpu -- "$@"
    collect --name ruen --latest "$out/ruen"
    rm -f "$out/ruen/training.png"  # a call brings back 8 files: the report and 7 of the run
}

session_rows() {
    # S2, first call: the rows of docs/comparison fine-tuned from the shipped model side by
    # side, then their dev report in the background (it goes on into the second call);
    # OUT gets the rows' metrics and the reports finished by then; `finish-report OUT` after
    local out=${1:?session-rows OUT}; shift
    local cpu
    cpu=$(cpu_flag)
    mkdir -p "$out"
    rows $cpu --from-embedded --steps "${ROWS_STEPS:-1000}" \
        --minutes "$(minutes_until "${REPORT_START:-420}")" --only "${ROWS_ONLY:-baseline,\
concat-plain,concat-cd,concat-cd-shift,context-encoder,capsule,concat-src,drafted,no-drafted}"
    check_logs || echo "a row died (its log above); the others go on, the report leaves it out"
    wait_run --seconds $(("${REPORT_START:-420}" + RESERVE / 2 - SECONDS)) || true
    rm -f "$RECIPE_DIR/report.done"
    setsid bash -c 'bash "$0" report "$1/report" "${@:2}" > "$1/report.log" 2>&1
                    echo $? > "$1/report.done"' "$0" "$RECIPE_DIR" "$@" < /dev/null \
        > /dev/null 2>&1 &
    report_copy --seconds $((CALL_SECONDS - SECONDS)) "$out"
}

report_copy() {
    # [--seconds S] OUT: wait up to S for the background report, then OUT gets what it has:
    # the whole report when done, else the rows' metrics and the models reported so far
    local seconds=0
    [ "${1:-}" = --seconds ] && { seconds=$2; shift 2; }
    local out=${1:?report_copy OUT} until=$((SECONDS + seconds))
    while [ ! -f "$RECIPE_DIR/report.done" ] && [ $SECONDS -lt $until ]; do sleep 5; done
    mkdir -p "$out"
    if [ -f "$RECIPE_DIR/report.done" ] && [ "$(cat "$RECIPE_DIR/report.done")" = 0 ]; then
        cp -r "$RECIPE_DIR/report/." "$out/"
        echo "report: complete"
    else
        [ -f "$RECIPE_DIR/report/metrics.json" ] && cp "$RECIPE_DIR/report/metrics.json" "$out/"
        if ls "$RECIPE_DIR"/reports/*.json > /dev/null 2>&1; then
            "$PY" -m subctx_train.cli dev-table "$RECIPE_DIR"/reports/*.json \
                --json "$out/dev_report.json" > /dev/null || true
        fi
        echo "report: not finished; $(ls "$RECIPE_DIR"/reports/*.json 2>/dev/null | wc -l)" \
             "models reported so far"
        tail -n 5 "$RECIPE_DIR/report.log" 2>/dev/null || true
    fi
    ls -la "$out"
}

session_big() {
    # stage 2, the call that trains: the bigger English-to-Russian model on real and
    # back-translated documents with the campaign's weights and the control tags, the speed
    # settings of THROUGHPUT (a report S1 brought back, carried), TRAIN OPTIONS after --
    # (e.g. --init-from the weights `stash` kept); the safety copy in int8 (a scale per row:
    # 54M parameters in one call); then `finish --dtype int8 OUT`
    local out=${1:?session-big OUT [-- TRAIN OPTIONS]}; shift
    [ "${1:-}" = -- ] && shift
    local cpu preset=$BIG_PRESET flags=()
    cpu=$(cpu_flag)
    [ -n "$cpu" ] && preset=tiny
    read -ra flags <<< "$(measured_flags 8 "$preset")"
    unpack  # before the budget is set: the real and synthetic documents take a while
    local RESERVE=$((RESERVE + 60))  # and twice the examples to load as the real pairs alone
    local recipe=("${SHIPPED[@]}" --max-k 1 --control-share 0.5)
    start $cpu --preset "$preset" --minutes "$(minutes_until "$TRAIN_END")" \
        --weights "$ENRU_WEIGHTS" -- "${recipe[@]}" "${flags[@]}" "$@"
    local report="$RECIPE_DIR/throughput-$preset.json" rows_pid
    rm -f "$report"
    speed_rows "$preset" "$report" &
    rows_pid=$!
    watch_run "$RECIPE_DIR/run" start $cpu --preset "$preset" --weights "$ENRU_WEIGHTS" -- \
        "${recipe[@]}" "$@"
    collect --latest --dtype int8 "$out"
    wait "$rows_pid" || true
    print_rows "$report"
}

stash() {
    # stash RUN: a carried run folder (weights a call brought back) kept on the machine as
    # $RECIPE_DIR/init, for `session-big OUT -- --init-from $RECIPE_DIR/init` in the next call
    local run=${1:?stash RUN}
    [ -f "$run/config.json" ] || die "stash: $run has no config.json (a collected run?)"
    mkdir -p "$RECIPE_DIR"
    rm -rf "$RECIPE_DIR/init"
    cp -r "$run" "$RECIPE_DIR/init"
    du -sh "$RECIPE_DIR/init"
}

finish() {
    # finish [--name NAME] [--dtype D] [--seconds S] OUT: the second call of a session:
    # wait up to S seconds (default 100) for the run's end, then its weights (final, or the
    # newest checkpoint if time ran out)
    local seconds=100 opts=()
    while [ $# -gt 1 ]; do
        case $1 in
            --seconds) shift; seconds=$1 ;;
            --name|--dtype) opts+=("$1" "$2"); shift ;;
            *) break ;;
        esac
        shift
    done
    local out=${1:?finish [--name NAME] [--dtype D] [--seconds S] OUT}
    wait_run --seconds "$seconds" || true
    collect "${opts[@]}" --latest "$out"
}

films() {
    # films OUT [MODEL]: the app's translate over the dev films on the GPU, timed
    local out=${1:?films OUT [MODEL]} model=${2:-$EMBEDDED}
    timeout "${FILMS_SECONDS:-90}" "$PY" bench/film_batch.py --model "$model" \
        --data "$RECIPE_DIR/data/devroot/friends_dev.jsonl" --device "${FILMS_DEVICE:-cuda}" \
        --json "$out/film_batch.json"
}

command=${1:-}
shift || true
case $command in
    pack) pack "$@" ;;
    park) park "$@" ;;
    unpark) unpark ;;
    pack-mono) pack_mono "$@" ;;
    pack-bt) pack_bt "$@" ;;
    prepare) unpack ;;
    add-bt) add_bt "$@" ;;
    rt) rt "$@" ;;
    bt) bt "$@" ;;
    bt-collect) bt_collect "$@" ;;
    bt-unpack) bt_unpack "$@" ;;
    start) start "$@" ;;
    wait) wait_run "$@" ;;
    collect) collect "$@" ;;
    rows) rows "$@" ;;
    report) report "$@" ;;
    session-ruen) session_ruen "$@" ;;
    session-rows) session_rows "$@" ;;
    finish-report) report_copy --seconds "${2:-100}" "${1:?finish-report OUT [SECONDS]}" ;;
    session-big) session_big "$@" ;;
    stash) stash "$@" ;;
    finish) finish "$@" ;;
    films) films "$@" ;;
    *) awk 'NR > 1 && !/^#/ { exit } NR > 1' "$0"; exit 2 ;;  # the header comment
esac
