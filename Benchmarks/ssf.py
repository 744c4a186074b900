#!/usr/bin/env python3
"""Shared Signals against a running server: what recording SETs adds to a change, how fast a
push stream drains, how fast a poll stream drains.

    python3 Benchmarks/ssf.py --server http://127.0.0.1:18200 --admin-key "$KEY" [--changes 1000] [--streams 3]

1. Recording: `--changes` user updates (disable, enable, …) through the admin API, one at a
   time, first with no stream, then with `--streams` poll streams each asking for every event:
   the time per change, and the SETs recorded.
2. Push: a push stream is paused, `--changes` changes are held, the stream is enabled, and the
   time until a local receiver (here, answering 202 without checking: the transmitter is what is
   measured) has them all is the drain rate.
3. Poll: a poll stream holding `--changes` SETs is drained by one client, 100 at a time,
   acknowledging each batch in the next poll.
"""
import argparse
import http.server
import json
import threading
import time
import urllib.request


def call(method, url, key, body=None):
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, method=method,
                                     headers={"Authorization": "Bearer " + key, "Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=60) as answer:
        raw = answer.read()
        return json.loads(raw) if raw else None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--server", required=True)
    parser.add_argument("--admin-key", required=True)
    parser.add_argument("--changes", type=int, default=1000)
    parser.add_argument("--streams", type=int, default=3)
    parser.add_argument("--receiver-port", type=int, default=18999)
    arguments = parser.parse_args()
    server, admin = arguments.server.rstrip("/"), arguments.admin_key
    tenant = "bench-%d" % int(time.time())
    call("POST", server + "/admin/v1/tenants", admin, {"slug": tenant, "display_name": "SSF bench"})
    base = server + "/t/" + tenant
    admin_base = server + "/admin/v1/tenants/" + tenant
    user = call("POST", admin_base + "/users", admin, {"username": "ada", "email": "ada@example.com"})["id"]
    key = call("POST", admin_base + "/admin-keys", admin, {"name": "receiver", "rights": ["ssf"]})["secret"]
    events = ["https://schemas.openid.net/secevent/risc/event-type/account-disabled",
              "https://schemas.openid.net/secevent/risc/event-type/account-enabled"]
    state = {"active": True}

    def changes(count):
        started = time.perf_counter()
        for _ in range(count):
            state["active"] = not state["active"]
            call("PATCH", admin_base + "/users/" + user, admin, {"status": "active" if state["active"] else "disabled"})
        return time.perf_counter() - started

    # 1. Recording.
    bare = changes(arguments.changes)
    streams = [call("POST", base + "/ssf/streams", key, {"events_requested": events})["stream_id"]
               for _ in range(arguments.streams)]
    recorded = changes(arguments.changes)
    print("recording: %d changes, no stream %.2f ms each; %d streams %.2f ms each (+%.2f ms for %d SETs)" % (
        arguments.changes, bare * 1000 / arguments.changes, arguments.streams, recorded * 1000 / arguments.changes,
        (recorded - bare) * 1000 / arguments.changes, arguments.streams))
    for stream in streams:
        call("DELETE", base + "/ssf/streams?stream_id=" + stream, key)

    # 2. Push.
    received = {"count": 0, "last": 0.0}
    lock = threading.Lock()

    class Receiver(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def do_POST(self):
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            with lock:
                received["count"] += 1
                received["last"] = time.perf_counter()
            self.send_response(202)
            self.send_header("Content-Length", "0")
            self.end_headers()

    receiver = http.server.ThreadingHTTPServer(("127.0.0.1", arguments.receiver_port), Receiver)
    threading.Thread(target=receiver.serve_forever, daemon=True).start()
    push = call("POST", base + "/ssf/streams", key, {
        "events_requested": events,
        "delivery": {"method": "urn:ietf:rfc:8935", "endpoint_url": "http://127.0.0.1:%d/" % arguments.receiver_port}})["stream_id"]
    call("POST", base + "/ssf/status", key, {"stream_id": push, "status": "paused"})
    changes(arguments.changes)
    started = time.perf_counter()
    call("POST", base + "/ssf/status", key, {"stream_id": push, "status": "enabled"})
    while received["count"] < arguments.changes and time.perf_counter() - started < 600:
        time.sleep(0.05)
    took = received["last"] - started
    print("push: %d held SETs delivered in %.2f s: %.0f SETs/s" % (received["count"], took, received["count"] / took))
    receiver.shutdown()
    call("DELETE", base + "/ssf/streams?stream_id=" + push, key)

    # 3. Poll.
    poll = call("POST", base + "/ssf/streams", key, {"events_requested": events})
    url = poll["delivery"]["endpoint_url"]
    changes(arguments.changes)
    got, acknowledge, polls = 0, [], 0
    started = time.perf_counter()
    while got < arguments.changes:
        answer = call("POST", url, key, {"ack": acknowledge, "maxEvents": 100, "returnImmediately": True})
        polls += 1
        acknowledge = list(answer["sets"].keys())
        got += len(acknowledge)
        if not acknowledge:
            break
    call("POST", url, key, {"ack": acknowledge, "maxEvents": 0, "returnImmediately": True})
    took = time.perf_counter() - started
    print("poll: %d SETs in %d polls in %.2f s: %.0f SETs/s" % (got, polls, took, got / took))


if __name__ == "__main__":
    main()
