#!/usr/bin/env python3
"""A WebAuthn relying party made of py_webauthn (PyPI `webauthn`), to check Countersign's
passkey authenticator against an implementation that shares no code with it.

The relying party's memory is one JSON state file: the pending challenge and the registered
credentials (public key, sign count, user handle). Responses are read from standard input, or
from the file named with --response.

    py_webauthn_rp.py options-register --state S --rp-id example.org --user-name alice [...]
    py_webauthn_rp.py verify-register  --state S --origin https://example.org [...]  < registration.json
    py_webauthn_rp.py options-sign-in  --state S [--allow-registered] [...]
    py_webauthn_rp.py verify-sign-in   --state S --origin https://example.org [...]  < assertion.json

Each prints JSON on standard output; a refused response prints the library's reason on
standard error and exits with status 1.
"""

import argparse
import json
import sys

import webauthn
from webauthn.helpers import bytes_to_base64url, base64url_to_bytes
from webauthn.helpers.exceptions import (
    InvalidAuthenticationResponse,
    InvalidJSONStructure,
    InvalidRegistrationResponse,
)
from webauthn.helpers.structs import (
    AttestationConveyancePreference,
    AuthenticatorSelectionCriteria,
    PublicKeyCredentialDescriptor,
    ResidentKeyRequirement,
    UserVerificationRequirement,
)


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except FileNotFoundError:
        return {"credentials": []}


def save(path, state):
    with open(path, "w") as f:
        json.dump(state, f, indent=2)


def text(value):
    """An enumeration's value; some py_webauthn versions return plain strings instead."""
    return getattr(value, "value", value)


def read_response(args):
    if args.response == "-":
        return sys.stdin.read()
    with open(args.response) as f:
        return f.read()


def refuse(reason):
    print(reason, file=sys.stderr)
    sys.exit(1)


def options_register(args):
    state = load(args.state)
    options = webauthn.generate_registration_options(
        rp_id=args.rp_id,
        rp_name=args.rp_name,
        user_name=args.user_name,
        user_display_name=args.user_display_name,
        user_id=base64url_to_bytes(args.user_id) if args.user_id else None,
        attestation=AttestationConveyancePreference(args.attestation),
        authenticator_selection=AuthenticatorSelectionCriteria(
            resident_key=ResidentKeyRequirement.REQUIRED,
            user_verification=UserVerificationRequirement(args.user_verification),
        ),
        exclude_credentials=[
            PublicKeyCredentialDescriptor(id=base64url_to_bytes(c["id"]))
            for c in state["credentials"]
            if args.exclude_registered
        ],
    )
    state.update(
        rp_id=args.rp_id,
        challenge=bytes_to_base64url(options.challenge),
        user_id=bytes_to_base64url(options.user.id),
    )
    save(args.state, state)
    print(webauthn.options_to_json(options))


def verify_register(args):
    state = load(args.state)
    try:
        verified = webauthn.verify_registration_response(
            credential=read_response(args),
            expected_challenge=base64url_to_bytes(state["challenge"]),
            expected_origin=args.origin,
            expected_rp_id=state["rp_id"],
            require_user_verification=args.require_user_verification,
        )
    except (InvalidRegistrationResponse, InvalidJSONStructure) as error:
        refuse(f"registration refused: {error}")
    credential = {
        "id": bytes_to_base64url(verified.credential_id),
        "public_key": bytes_to_base64url(verified.credential_public_key),
        "sign_count": verified.sign_count,
        "fmt": text(verified.fmt),
        "credential_type": text(verified.credential_type),
        "aaguid": verified.aaguid,
        "user_verified": verified.user_verified,
        "backed_up": verified.credential_backed_up,
        "device_type": text(verified.credential_device_type),
        "user_id": state["user_id"],
    }
    state["credentials"].append(credential)
    state.pop("challenge")
    save(args.state, state)
    print(json.dumps(credential))


def options_sign_in(args):
    state = load(args.state)
    rp_id = args.rp_id or state["rp_id"]
    options = webauthn.generate_authentication_options(
        rp_id=rp_id,
        allow_credentials=[
            PublicKeyCredentialDescriptor(id=base64url_to_bytes(c["id"]))
            for c in state["credentials"]
            if args.allow_registered
        ],
        user_verification=UserVerificationRequirement(args.user_verification),
    )
    state.update(rp_id=rp_id, challenge=bytes_to_base64url(options.challenge))
    save(args.state, state)
    print(webauthn.options_to_json(options))


def verify_sign_in(args):
    state = load(args.state)
    response = json.loads(read_response(args))
    stored = next((c for c in state["credentials"] if c["id"] == response.get("id")), None)
    if stored is None:
        refuse("sign-in refused: unknown credential")
    # Usernameless: the user handle names the account, and must be the credential's
    # (WebAuthn Level 3 §7.2 steps 6 and 7); py_webauthn leaves this to the relying party.
    if response.get("response", {}).get("userHandle") != stored["user_id"]:
        refuse("sign-in refused: the user handle is not the credential's")
    try:
        verified = webauthn.verify_authentication_response(
            credential=response,
            expected_challenge=base64url_to_bytes(state["challenge"]),
            expected_origin=args.origin,
            expected_rp_id=state["rp_id"],
            credential_public_key=base64url_to_bytes(stored["public_key"]),
            credential_current_sign_count=stored["sign_count"],
            require_user_verification=args.require_user_verification,
        )
    except (InvalidAuthenticationResponse, InvalidJSONStructure) as error:
        refuse(f"sign-in refused: {error}")
    stored["sign_count"] = verified.new_sign_count
    state.pop("challenge")
    save(args.state, state)
    print(json.dumps({
        "id": bytes_to_base64url(verified.credential_id),
        "new_sign_count": verified.new_sign_count,
        "user_verified": verified.user_verified,
        "backed_up": verified.credential_backed_up,
        "device_type": text(verified.credential_device_type),
    }))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    verification = ["required", "preferred", "discouraged"]

    register = commands.add_parser("options-register")
    register.add_argument("--state", required=True)
    register.add_argument("--rp-id", required=True)
    register.add_argument("--rp-name", default="Example")
    register.add_argument("--user-name", required=True)
    register.add_argument("--user-display-name")
    register.add_argument("--user-id", help="base64url; default: 64 random bytes")
    register.add_argument("--attestation", choices=["none", "indirect", "direct", "enterprise"], default="none")
    register.add_argument("--user-verification", choices=verification, default="preferred")
    register.add_argument("--exclude-registered", action="store_true")
    register.set_defaults(run=options_register)

    check_register = commands.add_parser("verify-register")
    check_register.add_argument("--state", required=True)
    check_register.add_argument("--origin", required=True)
    check_register.add_argument("--require-user-verification", action="store_true")
    check_register.add_argument("--response", default="-", help="the RegistrationResponseJSON file; - for standard input")
    check_register.set_defaults(run=verify_register)

    sign_in = commands.add_parser("options-sign-in")
    sign_in.add_argument("--state", required=True)
    sign_in.add_argument("--rp-id")
    sign_in.add_argument("--allow-registered", action="store_true")
    sign_in.add_argument("--user-verification", choices=verification, default="preferred")
    sign_in.set_defaults(run=options_sign_in)

    check_sign_in = commands.add_parser("verify-sign-in")
    check_sign_in.add_argument("--state", required=True)
    check_sign_in.add_argument("--origin", required=True)
    check_sign_in.add_argument("--require-user-verification", action="store_true")
    check_sign_in.add_argument("--response", default="-", help="the AuthenticationResponseJSON file; - for standard input")
    check_sign_in.set_defaults(run=verify_sign_in)

    args = parser.parse_args()
    args.run(args)


if __name__ == "__main__":
    main()
