#!/usr/bin/env python3
"""An authenticator and client that Countersign did not write, for its relying party's tests:
soft-webauthn's software token (built on Yubico's fido2 for CBOR and COSE) answers the options
Countersign hands out, and this script turns its answers into WebAuthn Level 3 JSON.

    soft_webauthn_client.py register STATE ORIGIN [OPTIONS] > registration.json
    soft_webauthn_client.py sign-in  STATE ORIGIN [OPTIONS] > assertion.json

The options are read from the file OPTIONS, or from standard input; they may be bare or wrapped as {"ceremony": ..., "publicKey": ...}. The token (its key,
credential ID, RP ID, user handle and counter) is kept in the JSON file STATE between calls.
The token tests user presence only: its flags never claim user verification.
"""
import base64
import json
import sys

from cryptography.hazmat.primitives import serialization
from soft_webauthn import SoftWebauthnDevice


def decode(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def encode(data):
    return base64.urlsafe_b64encode(data).decode("ascii").rstrip("=")


def save(device, path):
    key = device.private_key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    state = {
        "credential_id": encode(device.credential_id), "private_key": key.decode("ascii"),
        "rp_id": device.rp_id, "user_handle": encode(device.user_handle), "sign_count": device.sign_count,
    }
    with open(path, "w") as file:
        json.dump(state, file)


def load(path):
    with open(path) as file:
        state = json.load(file)
    device = SoftWebauthnDevice()
    device.credential_id = decode(state["credential_id"])
    device.private_key = serialization.load_pem_private_key(state["private_key"].encode("ascii"), password=None)
    device.rp_id = state["rp_id"]
    device.user_handle = decode(state["user_handle"])
    device.sign_count = state["sign_count"]
    return device


def main():
    command, state, origin = sys.argv[1:4]
    if len(sys.argv) > 4:
        with open(sys.argv[4]) as file:
            given = json.load(file)
    else:
        given = json.load(sys.stdin)
    options = dict(given.get("publicKey", given))
    options["challenge"] = decode(options["challenge"])
    if command == "register":
        options["user"] = dict(options["user"], id=decode(options["user"]["id"]))
        # The token makes "none" attestation only; asked for more, it answers with none, as a
        # client may (WebAuthn Level 3, 5.4.7), rather than failing.
        options["attestation"] = "none"
        device = SoftWebauthnDevice()
        made = device.create({"publicKey": options}, origin)
        save(device, state)
        answer = {
            "id": encode(made["rawId"]), "rawId": encode(made["rawId"]), "type": "public-key",
            "clientExtensionResults": {},
            "response": {
                "clientDataJSON": encode(made["response"]["clientDataJSON"]),
                "attestationObject": encode(made["response"]["attestationObject"]),
            },
        }
    elif command == "sign-in":
        device = load(state)
        made = device.get({"publicKey": options}, origin)
        save(device, state)
        response = made["response"]
        answer = {
            "id": encode(made["rawId"]), "rawId": encode(made["rawId"]), "type": "public-key",
            "clientExtensionResults": {},
            "response": {
                "clientDataJSON": encode(response["clientDataJSON"]),
                "authenticatorData": encode(response["authenticatorData"]),
                "signature": encode(response["signature"]), "userHandle": encode(response["userHandle"]),
            },
        }
    else:
        sys.exit("unknown command " + command)
    json.dump(answer, sys.stdout)


if __name__ == "__main__":
    main()
