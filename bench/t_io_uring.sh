#!/bin/bash
# iolab's io_uring against fio's own peak tester, t/io_uring, in alternating pairs on this machine.
#
#   bench/t_io_uring.sh [PAIRS]        (default 5 pairs per workload; about 2 minutes)
#
# Builds t/io_uring from fio's source: $FIO_SRC if set (a checkout of https://github.com/axboe/fio),
# else a shallow clone into $WORK of $FIO_REF: by default fio's b46877ed (September 2024), whose
# NOP is a bare IORING_OP_NOP as iolab sends it. From 63c250d1 on, t/io_uring's NOP asks the kernel to
# look up a file and inject a result (IORING_NOP_FILE, IORING_NOP_INJECT_RESULT) on every request: about
# 1.5x the work at batch 32 on the development VM, so iolab read as 1.55x ahead where the bare NOPs
# give 0.94x. Needs gcc, make, git (for the clone) and python3. Runs, each pair
# iolab then t/io_uring, 3 s apiece, on one thread:
#   nop1     IORING_OP_NOP, depth 1, batch 1
#   nop32    IORING_OP_NOP, depth 32, batch 32
#   read32   cached 4 KiB random reads (buffered, the file read once first), depth 32, batch 32
# and, where fio itself is installed, the mean latency of O_DIRECT 4 KiB random reads at depth 32 (batch 1)
# against fio's lat (slat + clat), 4 s apiece:
#   lat32    iolab's latency.mean_ns / fio's read.lat_ns.mean, and the same ratio of latency x IOPS / 32
#            (Little's law: 1 for both when each request's clock runs from its own submission, whatever
#            throughput the device gave that run)
# WORKLOADS="nop1 lat32" runs only those.
# iolab runs on its defaults (the recommended ring); t/io_uring with its own (registered ring, no fixed
# files or buffers, so both do the same work per request). Prints each pair's ops/s and the median of the
# per-pair ratios iolab / t/io_uring. Never run it beside another benchmark: two cores disturb each other.
set -euo pipefail
PAIRS=${1:-5}
HERE=$(cd "$(dirname "$0")/.." && pwd)
WORK=${WORK:-/var/tmp/iolab-t-io-uring}
IOLAB=${IOLAB:-$HERE/target/release/iolab}
mkdir -p "$WORK"
if [ ! -x "$IOLAB" ]; then
    (cd "$HERE" && cargo build --release -q)
fi
FIO_REF=${FIO_REF:-b46877edc9a94009ebbb33a461b21dad9bd40964}
SRC=${FIO_SRC:-$WORK/fio-${FIO_REF:0:8}}
if [ ! -x "$SRC/t/io_uring" ]; then
    if [ ! -f "$SRC/t/io_uring.c" ]; then
        git init -q "$SRC"
        git -C "$SRC" fetch -q --depth 1 https://github.com/axboe/fio "$FIO_REF"
        git -C "$SRC" checkout -q FETCH_HEAD
    fi
    (cd "$SRC" && ./configure > "$WORK/configure.log" 2>&1 && make -j2 t/io_uring > "$WORK/make.log" 2>&1)
fi
TIOU=$SRC/t/io_uring
FILE=$WORK/data.bin
if [ ! -f "$FILE" ]; then
    head -c 256M /dev/urandom > "$FILE.part" && mv "$FILE.part" "$FILE"
fi
cat "$FILE" > /dev/null   # cached from here on

iolab_ops() { # args: iolab run options; prints ops/s of the run's JSON
    local j=$WORK/run.json
    rm -f "$j"
    "$IOLAB" run --duration 3 --count none --json "$j" "$@" > /dev/null
    python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['iops'])" "$j"
}
tiou_ops() { # args: t/io_uring options; prints the mean of its per-second IOPS lines
    "$TIOU" -r 3 -p0 -B0 -F0 -O0 "$@" "$FILE" 2>&1 | python3 -c '
import re, sys
v = []
for line in sys.stdin:
    m = re.match(r"IOPS=([0-9.]+)([KM]?),", line)
    if m:
        v.append(float(m.group(1)) * {"": 1, "K": 1e3, "M": 1e6}[m.group(2)])
print(sum(v) / len(v) if v else "nan")'
}
pairs() { # name, iolab options, t/io_uring options
    local name=$1 lab=$2 peer=$3 ratios=()
    for i in $(seq "$PAIRS"); do
        # shellcheck disable=SC2086
        a=$(iolab_ops $lab)
        # shellcheck disable=SC2086
        b=$(tiou_ops $peer)
        r=$(python3 -c "print(f'{$a / $b:.3f}')")
        ratios+=("$r")
        printf '%-7s pair %d: iolab %.3f M ops/s, t/io_uring %.3f M ops/s, ratio %s\n' \
            "$name" "$i" "$(python3 -c "print($a/1e6)")" "$(python3 -c "print($b/1e6)")" "$r"
    done
    python3 -c "import statistics,sys; r=[float(x) for x in sys.argv[2:]]; print(f'{sys.argv[1]:<7} median iolab/t_io_uring {statistics.median(r):.3f}x (range {min(r):.3f}-{max(r):.3f}, {len(r)} pairs)')" "$name" "${ratios[@]}"
}
want() { [ -z "${WORKLOADS:-}" ] || [[ " $WORKLOADS " == *" $1 "* ]]; }
want nop1 && pairs nop1 "--method io_uring --nop-requests --qd 1 --batch 1 --target /dev/null" "-N1 -d1 -s1 -c1"
want nop32 && pairs nop32 "--method io_uring --nop-requests --qd 32 --batch 32 --target /dev/null" "-N1 -d32 -s32 -c32"
want read32 && pairs read32 "--method io_uring --op read --pattern rand --bs 4k --qd 32 --batch 32 --target $FILE" "-d32 -s32 -c32 -R1"

lat_pairs() { # O_DIRECT random reads at depth 32: iolab's mean latency against fio's lat
    local ratios=() littles=() j=$WORK/lat.json f=$WORK/fio.json
    for i in $(seq "$PAIRS"); do
        rm -f "$j"
        "$IOLAB" run --method io_uring --op read --pattern rand --bs 4k --qd 32 --direct --duration 4 \
            --ops 1G --count none --target "$FILE" --json "$j" > /dev/null
        fio --name=lat32 --filename="$FILE" --direct=1 --rw=randread --bs=4k --ioengine=io_uring \
            --iodepth=32 --runtime=4 --time_based --output-format=json --output="$f" > /dev/null
        r=$(python3 -c "
import json, sys
a = json.load(open(sys.argv[1])); b = json.load(open(sys.argv[2]))['jobs'][0]['read']
la, lb = a['latency']['mean_ns'] / 1e3, b['lat_ns']['mean'] / 1e3
# Little: at a steady depth of 32, mean latency x IOPS / 32 is 1 when each request's clock runs from its
# own submission to its completion; the device's throughput, which drifts between runs here, drops out.
ka, kb = la * a['iops'] / 32e6, lb * b['iops'] / 32e6
print(f'lat32   pair {sys.argv[3]}: iolab {la:.1f} us at {a[\"iops\"]:.0f} IOPS (x IOPS / 32: {ka:.3f}), fio {lb:.1f} us at {b[\"iops\"]:.0f} IOPS ({kb:.3f}), ratio {la / lb:.3f} {ka / kb:.3f}')
" "$j" "$f" "$i")
        echo "$r"
        read -r raw little <<< "$(echo "$r" | awk '{print $(NF-1), $NF}')"
        ratios+=("$raw")
        littles+=("$little")
    done
    python3 -c "import statistics,sys; r=[float(x) for x in sys.argv[1:]]; print(f'lat32   median iolab/fio mean latency {statistics.median(r):.3f}x (range {min(r):.3f}-{max(r):.3f}, {len(r)} pairs)')" "${ratios[@]}"
    python3 -c "import statistics,sys; r=[float(x) for x in sys.argv[1:]]; print(f'lat32   median iolab/fio of mean latency x IOPS / 32 {statistics.median(r):.3f}x (range {min(r):.3f}-{max(r):.3f}): the same meaning of latency, whatever the device gave each run')" "${littles[@]}"
}
if want lat32; then
    if command -v fio > /dev/null; then lat_pairs; else echo "lat32   SKIPPED: fio is not installed"; fi
fi
