#!/bin/bash
# User instructions per op of iolab's hot loops, counted by callgrind (valgrind): deterministic, so a
# change's effect is seen on a shared, noisy machine where timings are not.
#
#   bench/callgrind.sh            psync 4 B writes to /dev/null, io_uring NOPs at batch 1 and at batch 32
#   WORKLOADS="nop1" bench/callgrind.sh
#
# Each workload runs twice under callgrind, N and 2N ops (--count none: no counting pass), and the
# difference of the two totals over N is the cost of one op with the set-up, the summaries and the exit
# taken out. Only user-space instructions are counted (callgrind sees no kernel code). Needs valgrind
# (Debian: apt-get install valgrind); about a minute.
set -euo pipefail
HERE=$(cd "$(dirname "$0")/.." && pwd)
IOLAB=${IOLAB:-$HERE/target/release/iolab}
N=${N:-100000}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
command -v valgrind > /dev/null || { echo "bench/callgrind.sh: valgrind is not installed (apt-get install valgrind)" >&2; exit 1; }
if [ ! -x "$IOLAB" ]; then
    (cd "$HERE" && cargo build --release -q)
fi
total() { # ops, iolab run options: the instructions callgrind collected
    local ops=$1; shift
    # shellcheck disable=SC2068
    valgrind --tool=callgrind --callgrind-out-file="$WORK/cg.out" "$IOLAB" run --count none --ops "$ops" $@ \
        > /dev/null 2> "$WORK/cg.err"
    sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$WORK/cg.err"
}
per_op() { # name, iolab run options
    local name=$1 opts=$2 a b
    a=$(total "$N" "$opts")
    b=$(total $((2 * N)) "$opts")
    python3 -c "import sys; a,b,n=map(int,sys.argv[2:]); print(f'{sys.argv[1]:<7} {(b-a)/n:7.1f} user instructions per op ({n:,} ops: {a:,} -> {b:,} at twice as many)')" \
        "$name" "$a" "$b" "$N"
}
want() { [ -z "${WORKLOADS:-}" ] || [[ " $WORKLOADS " == *" $1 "* ]]; }
want psync && per_op psync "--method psync --bs 4 --target /dev/null"
want nop1 && per_op nop1 "--method io_uring --nop-requests --qd 1 --batch 1 --target /dev/null"
want nop32 && per_op nop32 "--method io_uring --nop-requests --qd 32 --batch 32 --target /dev/null"
