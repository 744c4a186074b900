#!/usr/bin/env python3
"""An SMTP server for the mail tests: aiosmtpd, with implicit TLS or STARTTLS and a login.

Each message accepted is parsed with Python's own e-mail package (an independent reader of what
the server wrote) and saved as JSON in --out, one file per message, named in order of arrival.
Recipients named bounce@… are refused for good (550), later@… for now (451).
"""
import argparse
import asyncio
import email
import email.policy
import json
import os
import signal
import ssl
import sys

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword, SMTP


class Handler:
    def __init__(self, out):
        self.out = out
        self.count = 0

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        local = address.split("@", 1)[0]
        if local == "bounce":
            return "550 5.1.1 mailbox unknown"
        if local == "later":
            return "451 4.3.0 try again later"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):
        message = email.message_from_bytes(envelope.original_content, policy=email.policy.default)
        body = message.get_body(preferencelist=("plain",))
        self.count += 1
        record = {
            "mail_from": envelope.mail_from,
            "rcpt_tos": envelope.rcpt_tos,
            # Whether the connection was TLS when the message came: STARTTLS or implicit.
            "tls": server.transport.get_extra_info("ssl_object") is not None,
            "login": session.auth_data.login.decode() if session.authenticated else None,
            "from_name": message["From"].addresses[0].display_name,
            "from_address": message["From"].addresses[0].addr_spec,
            "to": str(message["To"]),
            "subject": str(message["Subject"]),
            "message_id": str(message["Message-ID"]),
            "date": str(message["Date"]),
            "auto_submitted": message["Auto-Submitted"],
            "content_type": message.get_content_type(),
            "charset": message.get_content_charset(),
            "text": body.get_content() if body is not None else None,
            "defects": [type(defect).__name__ for defect in message.defects],
            "longest_line": max(len(line) for line in envelope.original_content.split(b"\r\n")),
        }
        path = os.path.join(self.out, "message-%04d.json" % self.count)
        with open(path + ".part", "w") as handle:
            json.dump(record, handle)
        os.rename(path + ".part", path)
        return "250 2.0.0 accepted"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--mode", choices=["tls", "starttls", "plain"], required=True)
    parser.add_argument("--cert")
    parser.add_argument("--key")
    parser.add_argument("--user")
    parser.add_argument("--password")
    parser.add_argument("--out", required=True)
    parser.add_argument("--log", help="where this process's errors go (its standard error is /dev/null)")
    arguments = parser.parse_args()
    if arguments.log:
        sys.stderr = open(arguments.log, "a", buffering=1)

    context = None
    if arguments.mode != "plain":
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(arguments.cert, arguments.key)

    def authenticate(server, session, envelope, mechanism, auth_data):
        if not isinstance(auth_data, LoginPassword):
            return AuthResult(success=False, handled=False)
        if auth_data.login.decode() == arguments.user and auth_data.password.decode() == arguments.password:
            return AuthResult(success=True, auth_data=auth_data)
        # Not handled: aiosmtpd answers 535 itself.
        return AuthResult(success=False, handled=False)

    handler = Handler(arguments.out)
    server_kwargs = {}
    if arguments.user:
        # With implicit TLS aiosmtpd does not count the connection as TLS (only STARTTLS), so it
        # would offer no AUTH if asked to require TLS for it.
        server_kwargs.update(authenticator=authenticate, auth_required=True,
                             auth_require_tls=arguments.mode == "starttls")
    if arguments.mode == "starttls":
        server_kwargs.update(tls_context=context, require_starttls=True)

    controller = Controller(
        handler, hostname="127.0.0.1", port=arguments.port,
        ssl_context=context if arguments.mode == "tls" else None,
        **server_kwargs)
    controller.start()
    with open(os.path.join(arguments.out, "ready"), "w") as handle:
        handle.write("ready")
    signal.sigwait([signal.SIGTERM, signal.SIGINT])
    controller.stop()


if __name__ == "__main__":
    main()
