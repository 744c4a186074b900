#!/usr/bin/env bash
# Fuzzes each target for the given number of seconds (default 60): the CBOR decoder (FuzzCBOR),
# the RADIUS packet reader (FuzzRADIUS), the PAM module's reader of its helper's lines
# (FuzzPAMLines, C), the readers of what directories send (FuzzLDAPNames: DNs, objectGUID and
# entryUUID, filter values), SCIM's filter, PATCH and resource readers (FuzzSCIM) and mail's address
# reader and message writer (FuzzMail), or only the targets named.
#
#   Fuzz/run.sh [seconds] [FuzzCBOR|FuzzRADIUS|FuzzPAMLines|FuzzLDAPNames|FuzzSCIM|FuzzMail ...]
#
# Exits non-zero if the fuzzer finds a crash; the crashing input is saved under
# Fuzz/.build/artifacts/ and listed at the end.
set -euo pipefail

seconds="${1:-60}"
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(FuzzCBOR FuzzRADIUS FuzzPAMLines FuzzLDAPNames FuzzSCIM FuzzMail)
fuzz_dir="$(cd "$(dirname "$0")" && pwd)"

# The fuzz package has its own .build under Fuzz/, so these flags never touch the main build.
# lld rather than the default gold: gold warns once per AddressSanitizer check symbol.
# The C targets (the PAM module's code) are instrumented too, with -Xcc.
flags=(-c debug --package-path "$fuzz_dir" -Xswiftc -sanitize=fuzzer,address -Xswiftc -use-ld=lld
       -Xcc -fsanitize=fuzzer-no-link,address)
swift build "${flags[@]}"
bin="$(swift build "${flags[@]}" --show-bin-path)"
artifacts="$fuzz_dir/.build/artifacts"
mkdir -p "$artifacts"

# libFuzzer reports a crash itself; the Swift runtime's backtracer would otherwise start
# alongside it and can outlive the fuzzer.
export SWIFT_BACKTRACE=enable=no

status=0
for target in "${targets[@]}"; do
    case "$target" in
        FuzzCBOR) corpus="$fuzz_dir/Corpus/CBOR" ;;
        FuzzRADIUS) corpus="$fuzz_dir/Corpus/RADIUS" ;;
        FuzzPAMLines) corpus="$fuzz_dir/Corpus/PAMLines" ;;
        FuzzLDAPNames) corpus="$fuzz_dir/Corpus/LDAPNames" ;;
        FuzzSCIM) corpus="$fuzz_dir/Corpus/SCIM" ;;
        FuzzMail) corpus="$fuzz_dir/Corpus/Mail" ;;
        *) echo "unknown fuzz target $target" >&2; exit 64 ;;
    esac
    # The fuzzer adds inputs to its corpus as it runs; work on a copy so the seeds stay as committed.
    work="$(mktemp -d)"
    cp "$corpus/"* "$work/"
    # No input of 4 KiB may make a reader ask for 64 MiB at once: a length claim must be checked
    # against the bytes that remain before anything is allocated for it (a RADIUS packet is at
    # most 4,096 octets too). The RSS limit leaves room for AddressSanitizer's quarantine on long
    # runs.
    "$bin/$target" -max_total_time="$seconds" -max_len=4096 -malloc_limit_mb=64 -rss_limit_mb=4096 -print_final_stats=1 \
        -artifact_prefix="$artifacts/$target-" "$work" || status=$?
    rm -rf "$work"
    if [ "$status" -ne 0 ]; then
        echo "$target found a crash (exit $status):" >&2
        ls -1t "$artifacts" >&2
        break
    fi
done
exit "$status"
