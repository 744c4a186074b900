#!/usr/bin/env bash
# Fuzzes the CBOR decoder for the given number of seconds (default 60).
#
#   Fuzz/run.sh [seconds]
#
# Exits non-zero if the fuzzer finds a crash; the crashing input is saved under
# Fuzz/.build/artifacts/ and listed at the end.
set -euo pipefail

seconds="${1:-60}"
fuzz_dir="$(cd "$(dirname "$0")" && pwd)"

# The fuzz package has its own .build under Fuzz/, so these flags never touch the main build.
# lld rather than the default gold: gold warns once per AddressSanitizer check symbol.
flags=(-c debug --package-path "$fuzz_dir" -Xswiftc -sanitize=fuzzer,address -Xswiftc -use-ld=lld)
swift build "${flags[@]}"
binary="$(swift build "${flags[@]}" --show-bin-path)/FuzzCBOR"

# The fuzzer adds inputs to its corpus as it runs; work on a copy so the seeds stay as committed.
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cp "$fuzz_dir/Corpus/CBOR/"* "$work/"
artifacts="$fuzz_dir/.build/artifacts"
mkdir -p "$artifacts"

# libFuzzer reports a crash itself; the Swift runtime's backtracer would otherwise start
# alongside it and can outlive the fuzzer.
export SWIFT_BACKTRACE=enable=no

# No input of 4 KiB may make the decoder ask for 64 MiB at once: a length claim must be checked
# against the bytes that remain before anything is allocated for it. The RSS limit leaves room
# for AddressSanitizer's quarantine on long runs.
status=0
"$binary" -max_total_time="$seconds" -max_len=4096 -malloc_limit_mb=64 -rss_limit_mb=4096 -print_final_stats=1 \
    -artifact_prefix="$artifacts/" "$work" || status=$?

if [ "$status" -ne 0 ]; then
    echo "FuzzCBOR found a crash (exit $status):" >&2
    ls -1t "$artifacts" >&2
fi
exit "$status"
