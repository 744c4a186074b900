#!/usr/bin/env python3
"""Writes the link order of the countersign binary's code: the functions a running server runs.

A release build on Linux links the functions this lists first (Package.swift passes the file to
lld with --symbol-ordering-file), so that the code a server runs sits together at the start of
the binary's text instead of being spread over all of it. The kernel maps code into a process a
fault-around window or a page-cache folio at a time, so a few bytes of code run once at start
keep whole neighbourhoods of code that never runs resident. BENCHMARKS.md ("Memory: code in the
order it runs") has the figures.

Which functions run is found by Benchmarks/code-trace.c: a breakpoint on every function entry,
each removed the first time a thread reaches it. A server is started under it and put under
load by `countersign-bench loop --server … --pending …` (the one built beside the binary), once
on SQLite and, with --database-url, once more on PostgreSQL; the functions that ran in either go
into the order, sorted by name.

Build the production binary with function sections (docs/operations.md §1), then:

    python3 Benchmarks/code-order.py .build-static/release/countersign \\
        --database-url 'postgres://countersign:countersign@127.0.0.1:5432/cs_order?sslmode=disable'

It writes Sources/countersign/Link/code-order.txt. The build does not know the link reads it:
remove the binary (`rm .build-static/release/countersign`) and build again to link in the new
order. A function the file names that a build does not have is passed over, and a function it
does not name is linked after those it does: a stale order costs memory, never correctness. The
database the URL names must exist and be empty.
"""

import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))


def functions(binary):
    """{address: [names]} of every sized function in the binary's symbol table."""
    out = subprocess.run(["readelf", "-sW", binary], check=True, capture_output=True, text=True).stdout
    found = {}
    for line in out.splitlines():
        parts = line.split()
        # Num: Value Size Type Bind Vis Ndx Name
        if len(parts) < 8 or not parts[0].endswith(":") or parts[3] != "FUNC" or parts[6] in ("UND", "ABS"):
            continue
        address, size = int(parts[1], 16), int(parts[2], 0)
        if address and size:
            found.setdefault(address, []).append(parts[7])
    return found


def wait_for(url, seconds, process):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if process.poll() is not None:
            sys.exit(f"the server exited with status {process.returncode}")
        try:
            urllib.request.urlopen(url, timeout=1).read()
            return
        except OSError:
            time.sleep(0.3)
    sys.exit(f"the server did not answer {url}")


def traced_run(tracer, entries, binary, work, name, port, loops, pending, database_url=None):
    """Runs a server under the tracer, loads it with countersign-bench, returns the entries that ran."""
    hits = os.path.join(work, f"{name}.hits")
    bench = os.path.join(os.path.dirname(os.path.abspath(binary)), "countersign-bench")
    log_path = os.path.join(work, f"{name}.log")
    command = [tracer, entries, hits, "--", os.path.abspath(binary), "serve", "--port", str(port),
               "--data-dir", os.path.join(work, f"{name}-data")]
    if database_url:
        command += ["--database-url", database_url]
    with open(log_path, "w+") as log:
        server = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
        try:
            wait_for(f"http://127.0.0.1:{port}/metrics", 120, server)
            log.seek(0)
            key = re.search(r"COUNTERSIGN_ADMIN_KEY='([^']+)'", log.read())
            if not key:
                sys.exit(f"the server printed no admin key (see {log_path})")
            subprocess.run([bench, "loop", "--server", f"http://127.0.0.1:{port}", "--loops", str(loops),
                            "--concurrency", "64", "--pending", str(pending)],
                           env=dict(os.environ, COUNTERSIGN_ADMIN_KEY=key.group(1)), check=True)
        finally:
            server.send_signal(signal.SIGTERM)
            server.wait()
        log.seek(0)
        print(f"{name}: " + " ".join(line.strip() for line in log if line.startswith("code-trace")))
    with open(hits) as f:
        return {int(line, 16) for line in f if line.strip()}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("binary", help="a release build of countersign, linked with function sections")
    parser.add_argument("--output", default=os.path.join(HERE, "..", "Sources", "countersign", "Link", "code-order.txt"))
    parser.add_argument("--database-url", help="an empty PostgreSQL database, to trace the server on it too")
    parser.add_argument("--port", type=int, default=18390)
    parser.add_argument("--loops", type=int, default=2000)
    parser.add_argument("--pending", type=int, default=10000)
    args = parser.parse_args()

    work = tempfile.mkdtemp(prefix="countersign-order.")
    try:
        write_order(args, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def write_order(args, work):
    tracer = os.path.join(work, "code-trace")
    subprocess.run(["cc", "-O2", "-o", tracer, os.path.join(HERE, "code-trace.c")], check=True)
    table = functions(args.binary)
    entries = os.path.join(work, "entries")
    with open(entries, "w") as f:
        f.write("".join(f"{address:x}\n" for address in sorted(table)))

    ran = traced_run(tracer, entries, args.binary, work, "sqlite", args.port, args.loops, args.pending)
    if args.database_url:
        ran |= traced_run(tracer, entries, args.binary, work, "postgresql", args.port + 1, args.loops, args.pending,
                          args.database_url)

    # Sorted by name, so that writing the order again changes only the lines of functions that
    # came or went: the whole stretch is resident anyway, whatever the order inside it.
    names = sorted({name for address in ran for name in table.get(address, [])})
    with open(args.output, "w") as f:
        f.write("\n".join(names) + "\n")
    print(f"{len(ran)} of {len(table)} functions ran; {len(names)} names written to {os.path.normpath(args.output)}")


if __name__ == "__main__":
    main()
