#!/bin/bash
# Distinct 4 KiB pages of code and data one round of iolab's hot loop touches, traced by valgrind's lackey.
#
#   bench/pages.sh [iolab run options]     default: io_uring NOPs at batch 1 (--nop-requests --qd 1 --batch 1)
#   bench/pages.sh --method psync --bs 4 --target /dev/null
#
# On a VM whose TLB is emptied at every system call (the development VM: a software-virtualized guest),
# each page a round touches is refilled after the call: a raw NOP loop writing 16 more pages per round
# went from 245 to 340 ns per NOP there. The run makes 3,000 ops; a round is the stretch between two
# executions of one instruction executed once per op (the middle one of those), and rounds 1,000-2,000 are
# counted. Prints the mean code and data pages per round and one median round's pages, with the function
# and line each code page was entered at. Needs valgrind and binutils' addr2line; under a minute.
set -euo pipefail
HERE=$(cd "$(dirname "$0")/.." && pwd)
IOLAB=${IOLAB:-$HERE/target/release/iolab}
command -v valgrind > /dev/null || { echo "bench/pages.sh: valgrind is not installed (apt-get install valgrind)" >&2; exit 1; }
if [ ! -x "$IOLAB" ]; then
    (cd "$HERE" && cargo build --release -q)
fi
[ $# -gt 0 ] || set -- --method io_uring --nop-requests --qd 1 --batch 1 --target /dev/null
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
valgrind --tool=lackey --trace-mem=yes --log-file="$WORK/trace" "$IOLAB" run --count none --ops 3000 "$@" \
    > /dev/null 2> "$WORK/err" || { cat "$WORK/err" >&2; exit 1; }
python3 - "$WORK/trace" "$IOLAB" <<'PY'
import collections, statistics, subprocess, sys
trace, binary = sys.argv[1], sys.argv[2]
lines = open(trace, errors='replace').read().splitlines()
count = collections.Counter(l[3:].split(',')[0] for l in lines if l.startswith('I  '))
# An instruction of the program (valgrind loads a PIE at 0x108000; libraries are far above) run once per op.
once = sorted(a for a, k in count.items() if 3000 <= k <= 3010 and int(a, 16) < 0x4000000)
if not once:
    sys.exit('bench/pages.sh: no instruction of iolab ran once per op')
mark = int(once[len(once) // 2], 16)
rounds, cur, k = [], [], 0
for l in lines:
    if l.startswith('I  '):
        a = int(l[3:].split(',')[0], 16)
        if a == mark:
            k += 1
            if 1000 < k <= 2001:
                rounds.append(cur)
            cur = []
        cur.append(('I', a))
    elif l[:2] in (' L', ' S', ' M'):
        cur.append((l[1], int(l[3:].split(',')[0], 16)))
def pages(r, code):
    return {a >> 12 for t, a in r if (t == 'I') == code}
sizes = [(len(pages(r, True)), len(pages(r, False))) for r in rounds]
print(f'{len(rounds)} rounds: {statistics.mean(c for c, _ in sizes):.2f} code pages and '
      f'{statistics.mean(d for _, d in sizes):.2f} data pages per round (mean)')
med = statistics.median(c + d for c, d in sizes)
r = next(r for r, s in zip(rounds, sizes) if sum(s) == med)
first = {}
for t, a in r:
    if t == 'I':
        first.setdefault(a >> 12, a)
print('one round\'s code pages (entered at):')
for pg, a in first.items():
    where = 'a shared library'
    if a < 0x4000000:
        out = subprocess.run(['addr2line', '-f', '-C', '-e', binary, hex(a - 0x108000)],
                             capture_output=True, text=True).stdout.split('\n')
        where = f'{out[0][:70]} ({out[1].split("/")[-1]})'
    print(f'  {pg << 12:#x}  {where}')
print('its data pages:', ' '.join(f'{pg << 12:#x}' for pg in sorted(pages(r, False))))
PY
