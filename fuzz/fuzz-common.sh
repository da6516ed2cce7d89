# fuzz-common.sh - what scripts/fuzz-ci and scripts/fuzz-long share (sourced, POSIX sh, from the
# repository root): the list of targets, their seed directories, the clang build, one target's
# run under libFuzzer with its figures, and a batch of targets run side by side.

BUILD_FUZZ=${BUILD_FUZZ:-build-fuzz}
FINDINGS=${FINDINGS:-$BUILD_FUZZ/findings}
# a finding stops the run of UBSan too (the build sets -fno-sanitize-recover=all as well)
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}"

# Prints every target T (one a line) of fuzz/fuzz_T.c.
fuzz_targets() {
    for f in fuzz/fuzz_*.c; do
        t=${f#fuzz/fuzz_}
        echo "${t%.c}"
    done
}

# Prints the seed directories of target $1 that exist: fuzz/regress/T, fuzz/seeds/T and those
# fuzz/seed-dirs names for T.
fuzz_seeds() {
    dirs="fuzz/regress/$1 fuzz/seeds/$1 $(awk -v t="$1" '$1 == t { $1 = ""; print }' fuzz/seed-dirs)"
    for d in $dirs; do
        [ -d "$d" ] && echo "$d"
    done
    return 0
}

# Builds every target with clang, libFuzzer, ASan and UBSan into $BUILD_FUZZ (only the targets
# and what they link). $1: parallel jobs.
fuzz_build() {
    CC=clang cmake -S . -B "$BUILD_FUZZ" -DRT_FUZZ=ON -DRT_TESTS=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
    # shellcheck disable=SC2046 # one word per target
    cmake --build "$BUILD_FUZZ" -j "$1" --target $(fuzz_targets | sed 's/^/fuzz_/')
}

# Prints "RUNS EXECS COV FT CORP" from a libFuzzer log $1 (the final stats and the last status
# line; "-" for what it lacks).
fuzz_figures() {
    awk '/^stat::number_of_executed_units:/ { runs = $2 }
         /^stat::average_exec_per_sec:/ { eps = $2 }
         / cov: / { for (i = 1; i < NF; i++) { if ($i == "cov:") cov = $(i + 1); if ($i == "ft:") ft = $(i + 1);
                    if ($i == "corp:") { split($(i + 1), c, "/"); corp = c[1] } } }
         END { printf "%s %s %s %s %s\n", runs == "" ? "-" : runs, eps == "" ? "-" : eps, cov == "" ? "-" : cov,
               ft == "" ? "-" : ft, corp == "" ? "-" : corp }' "$1"
}

# Runs target $1 for $2 seconds with working corpus $3 (written) and its seeds (only read),
# its logs under $4. After a finding (a crash, leak, timeout or out-of-memory, written under
# $FINDINGS) it goes on with the time left when FUZZ_KEEP_GOING=1, up to FUZZ_MAX_FINDINGS (5).
# Writes $4/$1.result: "SECS RUNS EXEC/S COV FT CORP FINDINGS" and $4/$1.findings (the inputs).
# Returns 0, or 1 after a finding.
fuzz_one() {
    t=$1 left=$2 corpus=$3 out=$4
    mkdir -p "$corpus" "$FINDINGS"
    : >"$out/$t.findings"
    runs=0 secs=0 found=0 last=-
    while [ "$left" -gt 0 ]; do
        start=$(date +%s)
        rc=0
        # shellcheck disable=SC2046 # one word per seed directory
        "$BUILD_FUZZ/fuzz_$t" -max_total_time="$left" -rss_limit_mb=2048 -timeout="${FUZZ_TIMEOUT:-10}" \
            -print_final_stats=1 -artifact_prefix="$FINDINGS/$t-" "$corpus" $(fuzz_seeds "$t") \
            >"$out/$t.log" 2>&1 || rc=$?
        took=$(($(date +%s) - start))
        secs=$((secs + took))
        left=$((left - took))
        # shellcheck disable=SC2046 # RUNS EXECS COV FT CORP
        set -- $(fuzz_figures "$out/$t.log")
        [ "$1" != - ] && runs=$((runs + $1))
        [ "$3" != - ] && last="$3 $4 $5"
        if [ "$rc" -ne 0 ]; then
            found=$((found + 1))
            cp "$out/$t.log" "$out/$t.finding-$found.log"
            art=$(sed -n 's/.*Test unit written to //p' "$out/$t.log" | tail -n 1)
            echo "${art:-"(no input written: see $out/$t.finding-$found.log)"}" >>"$out/$t.findings"
            if [ "${FUZZ_KEEP_GOING:-0}" != 1 ] || [ "$found" -ge "${FUZZ_MAX_FINDINGS:-5}" ]; then
                break
            fi
        fi
    done
    [ "$last" = - ] && last="- - -"
    echo "$secs $runs $((runs / (secs > 0 ? secs : 1))) $last $found" >"$out/$t.result"
    [ "$found" -eq 0 ]
}

# Runs fuzz_one for every target in $1 (a list), $2 seconds each, FUZZ_JOBS ($(nproc)) at a
# time, the working corpus of T being $3T (a directory made when missing), logs under $4.
fuzz_batch() {
    jobs=${FUZZ_JOBS:-$(nproc 2>/dev/null || echo 2)}
    n=0
    for t in $1; do
        fuzz_one "$t" "$2" "$3$t" "$4" &
        n=$((n + 1))
        if [ "$n" -ge "$jobs" ]; then
            wait
            n=0
        fi
    done
    wait
}
