#!/usr/bin/env python3
"""A Shared Signals receiver for the tests, independent of the server's code: joserfc checks
each Security Event Token's signature with the keys the transmitter publishes (its jwks_uri,
read from /.well-known/ssf-configuration), and the rules SSF 1.0 and RFC 8417 set for a SET:
typ secevent+jwt, RS256, iss and aud as configured, a jti and an iat, a top-level sub_id with a
format, exactly one event, and neither sub nor exp.

Two modes:

  push  an RFC 8935 endpoint on 127.0.0.1:--port. Each SET that passes is saved as JSON in --out
        (one file per SET, in order of arrival) and answered 202; one that fails is answered 400
        with {"err", "description"} and saved as rejected-NNNN.json. --fail-first N answers the
        first N deliveries 503 before reading them; --token T answers 401 unless the request
        carries "Authorization: Bearer T". Writes --out/ready once listening.

  poll  an RFC 8936 client: polls --poll-url with the admin key --key until --count SETs passed
        (or --timeout seconds), acknowledging each batch in the next request, long-polling
        unless --return-immediately; then acknowledges the last batch and prints one JSON
        document: {"sets": [...verified SETs...], "rejected": [...], "polls": N}.
"""
import argparse
import http.server
import json
import os
import sys
import threading
import time
import urllib.parse
import urllib.request

from joserfc import jwt
from joserfc.errors import JoseError
from joserfc.jwk import KeySet


class Verifier:
    def __init__(self, metadata_url, audience):
        with urllib.request.urlopen(metadata_url, timeout=10) as answer:
            self.metadata = json.load(answer)
        self.issuer = self.metadata["issuer"]
        self.audience = audience
        self.jwks_uri = self.metadata["jwks_uri"]
        self.keys = None
        self.lock = threading.Lock()

    def key_set(self, refresh=False):
        with self.lock:
            if self.keys is None or refresh:
                with urllib.request.urlopen(self.jwks_uri, timeout=10) as answer:
                    self.keys = KeySet.import_key_set(json.load(answer))
            return self.keys

    def verify(self, token):
        """The SET's header and claims, or raises (err, description)."""
        try:
            try:
                decoded = jwt.decode(token, self.key_set(), algorithms=["RS256"])
            except JoseError:
                # A key rotated in since the last read.
                decoded = jwt.decode(token, self.key_set(refresh=True), algorithms=["RS256"])
        except (JoseError, ValueError) as error:
            raise Rejection("invalid_key", "the signature does not verify: %s" % error)
        header, claims = decoded.header, decoded.claims
        if header.get("typ") != "secevent+jwt":
            raise Rejection("invalid_request", "typ is %r, not secevent+jwt" % header.get("typ"))
        if claims.get("iss") != self.issuer:
            raise Rejection("invalid_issuer", "iss is %r" % claims.get("iss"))
        audience = claims.get("aud")
        audiences = audience if isinstance(audience, list) else [audience]
        if self.audience not in audiences:
            raise Rejection("invalid_audience", "aud is %r" % audience)
        for member in ("jti", "iat", "sub_id", "events"):
            if member not in claims:
                raise Rejection("invalid_request", "%s is missing" % member)
        for member in ("sub", "exp"):
            if member in claims:
                raise Rejection("invalid_request", "%s must not be in a SET" % member)
        if not isinstance(claims["iat"], int):
            raise Rejection("invalid_request", "iat is not a number")
        if not isinstance(claims["sub_id"], dict) or "format" not in claims["sub_id"]:
            raise Rejection("invalid_request", "sub_id has no format")
        if not isinstance(claims["events"], dict) or len(claims["events"]) != 1:
            raise Rejection("invalid_request", "events holds %d events, not one" % len(claims.get("events") or {}))
        return {"header": dict(header), "claims": claims}


class Rejection(Exception):
    def __init__(self, err, description):
        super().__init__(description)
        self.err = err
        self.description = description


def write(directory, name, record):
    path = os.path.join(directory, name)
    with open(path + ".part", "w") as handle:
        json.dump(record, handle)
    os.rename(path + ".part", path)


def push(arguments):
    os.makedirs(arguments.out, exist_ok=True)
    verifier = Verifier(arguments.metadata, arguments.audience)
    state = {"deliveries": 0, "accepted": 0, "rejected": 0}
    lock = threading.Lock()

    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def answer(self, status, body=None):
            data = json.dumps(body).encode() if body is not None else b""
            self.send_response(status)
            if body is not None:
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Language", "en")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_POST(self):
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length).decode("ascii", "replace")
            with lock:
                state["deliveries"] += 1
                delivery = state["deliveries"]
            if delivery <= arguments.fail_first:
                return self.answer(503)
            if arguments.token and self.headers.get("Authorization") != "Bearer " + arguments.token:
                return self.answer(401)
            try:
                if self.headers.get("Content-Type") != "application/secevent+jwt":
                    raise Rejection("invalid_request", "Content-Type is %r" % self.headers.get("Content-Type"))
                if self.headers.get("Accept") != "application/json":
                    raise Rejection("invalid_request", "Accept is %r" % self.headers.get("Accept"))
                record = verifier.verify(body)
            except Rejection as rejection:
                with lock:
                    state["rejected"] += 1
                    write(arguments.out, "rejected-%04d.json" % state["rejected"],
                          {"err": rejection.err, "description": rejection.description})
                return self.answer(400, {"err": rejection.err, "description": rejection.description})
            with lock:
                state["accepted"] += 1
                write(arguments.out, "set-%04d.json" % state["accepted"], record)
            self.answer(202)

    server = http.server.ThreadingHTTPServer(("127.0.0.1", arguments.port), Handler)
    write(arguments.out, "ready", {"port": arguments.port})
    server.serve_forever()


def poll(arguments):
    verifier = Verifier(arguments.metadata, arguments.audience)
    verified, rejected, acknowledge, polls = [], [], [], 0
    deadline = time.monotonic() + arguments.timeout
    while len(verified) < arguments.count and time.monotonic() < deadline:
        request = {"ack": acknowledge, "returnImmediately": arguments.return_immediately}
        if arguments.max_events is not None:
            request["maxEvents"] = arguments.max_events
        answer = call(arguments, request)
        polls += 1
        acknowledge, errors = [], {}
        for jti, token in sorted(answer["sets"].items()):
            try:
                record = verifier.verify(token)
                if record["claims"]["jti"] != jti:
                    raise Rejection("invalid_request", "the SET's jti is not the key it came under")
                verified.append(record)
                acknowledge.append(jti)
            except Rejection as rejection:
                rejected.append({"jti": jti, "err": rejection.err, "description": rejection.description})
                errors[jti] = {"err": rejection.err, "description": rejection.description}
        if errors:
            call(arguments, {"maxEvents": 0, "returnImmediately": True, "setErrs": errors})
        if not answer["sets"] and arguments.return_immediately:
            time.sleep(0.1)
    if acknowledge:
        call(arguments, {"ack": acknowledge, "maxEvents": 0, "returnImmediately": True})
    json.dump({"sets": verified, "rejected": rejected, "polls": polls}, sys.stdout)


def call(arguments, request):
    data = json.dumps(request).encode()
    http_request = urllib.request.Request(
        arguments.poll_url, data=data, method="POST",
        headers={"Content-Type": "application/json", "Accept": "application/json",
                 "Authorization": "Bearer " + arguments.key})
    with urllib.request.urlopen(http_request, timeout=60) as answer:
        body = json.load(answer)
    if not isinstance(body.get("sets"), dict):
        raise SystemExit("the poll answer has no sets object: %r" % body)
    return body


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=["push", "poll"])
    parser.add_argument("--metadata", required=True, help="the transmitter's /.well-known/ssf-configuration URL")
    parser.add_argument("--audience", required=True)
    parser.add_argument("--port", type=int)
    parser.add_argument("--out")
    parser.add_argument("--fail-first", type=int, default=0)
    parser.add_argument("--token")
    parser.add_argument("--poll-url")
    parser.add_argument("--key")
    parser.add_argument("--count", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=30)
    parser.add_argument("--max-events", type=int)
    parser.add_argument("--return-immediately", action="store_true")
    parser.add_argument("--log")
    arguments = parser.parse_args()
    if arguments.log:
        sys.stderr = open(arguments.log, "a", buffering=1)
    if arguments.mode == "push":
        push(arguments)
    else:
        poll(arguments)


if __name__ == "__main__":
    main()
