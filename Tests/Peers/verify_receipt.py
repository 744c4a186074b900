#!/usr/bin/env python3
"""Verifies a Countersign approval receipt with the tenant's published JWKS alone, using joserfc,
a JOSE library independent of the server's.

Reads {"receipt": {...}, "jwks": {...}, "issuer": "...", "client_id": "..."} on standard input.
Prints {"sub", "tenant", "device_id", "decision", "factors", "details"} as JSON when every check
passes; otherwise prints the failed check on standard error and exits with status 1.

The steps are those of docs/ciba.md, "Approval receipts":
  1. the device certificate is an ES256 JWS of typ countersign-device+jwt, signed by the key of
     the JWKS its kid names, issued by the tenant (iss);
  2. the response is an ES256 JWS of typ countersign-response+jwt by the certificate's cnf.jwk,
     with kid the certificate's device_id;
  3. the SHA-256 of the details, exactly as received, is the signed details_sha256, and the
     details' request_id and challenge are the signed ones;
  4. the details are the client's request, for the certificate's user and tenant.
"""
import base64
import hashlib
import json
import sys

from joserfc import jws
from joserfc.errors import JoseError
from joserfc.jwk import ECKey, KeySet


def fail(why):
    print(why, file=sys.stderr)
    sys.exit(1)


def b64u(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def verified(token, key, typ):
    try:
        signed = jws.deserialize_compact(token, key, algorithms=["ES256"])
    except (JoseError, ValueError) as error:
        fail(f"{typ}: the signature does not verify ({error})")
    if signed.headers().get("typ") != typ:
        fail(f"{typ}: typ is {signed.headers().get('typ')}")
    return signed.headers(), json.loads(signed.payload)


def main():
    given = json.load(sys.stdin)
    receipt, issuer, client_id = given["receipt"], given["issuer"], given["client_id"]

    _, certificate = verified(receipt["device_certificate"], KeySet.import_key_set(given["jwks"]), "countersign-device+jwt")
    if certificate.get("iss") != issuer:
        fail(f"the certificate's iss is {certificate.get('iss')}, not {issuer}")
    device_key = ECKey.import_key(certificate["cnf"]["jwk"])

    header, response = verified(receipt["response"], device_key, "countersign-response+jwt")
    if header.get("kid") != certificate["device_id"]:
        fail("the response was signed as another device than the certificate's")

    details_bytes = receipt["details"].encode("utf-8")
    if response["details_sha256"] != b64u(hashlib.sha256(details_bytes).digest()):
        fail("the device signed other details")
    details = json.loads(details_bytes)
    if response["request_id"] != details["request_id"] or response["challenge"] != details["challenge"]:
        fail("the response is for another request")
    if details["client"]["id"] != client_id:
        fail("the details are another client's request")
    if details["user"]["id"] != certificate["sub"] or details["tenant"] != certificate["tenant"]:
        fail("the certificate is another user's or another tenant's")

    print(json.dumps({
        "sub": certificate["sub"], "tenant": certificate["tenant"], "device_id": certificate["device_id"],
        "decision": response["decision"], "factors": response["factors"], "details": details,
    }, sort_keys=True))


main()
