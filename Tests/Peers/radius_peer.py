"""pyrad, an independent RADIUS implementation, as the client of Countersign's RADIUS packets.

  radius_peer.py request SECRET USERNAME PASSWORD [--without-message-authenticator]
      prints {"packet": hex} of an Access-Request pyrad builds: User-Name, the password hidden as
      RFC 2865 section 5.2 says, NAS-Identifier and Calling-Station-Id, and a Message-Authenticator
      (RFC 3579) unless told not to.
  radius_peer.py verify SECRET REQUEST_HEX REPLY_HEX
      prints what pyrad makes of Countersign's reply to that request: whether its Response
      Authenticator and its Message-Authenticator verify, whether the Message-Authenticator comes
      first, and its attributes.
"""
import json
import os
import sys

from pyrad.dictionary import Dictionary
from pyrad.packet import AccessRequest, AuthPacket, Packet

DICTIONARY = Dictionary(os.path.join(os.path.dirname(os.path.abspath(__file__)), "radius.dictionary"))


def request(secret, username, password, message_authenticator):
    packet = AuthPacket(code=AccessRequest, id=42, secret=secret, dict=DICTIONARY)
    packet["User-Name"] = username
    packet["User-Password"] = packet.PwCrypt(password)
    packet["NAS-Identifier"] = "vpn-gw-1"
    packet["Calling-Station-Id"] = "203.0.113.9"
    if message_authenticator:
        packet.add_message_authenticator()
    return {"packet": packet.RequestPacket().hex()}


def verify(secret, request_hex, reply_hex):
    raw_request, raw_reply = bytes.fromhex(request_hex), bytes.fromhex(reply_hex)
    sent = AuthPacket(packet=raw_request, secret=secret, dict=DICTIONARY)
    reply = Packet(packet=raw_reply, secret=secret, dict=DICTIONARY)
    attributes = {}
    for key in reply.keys():
        values = reply[key]
        attributes[key] = [v.hex() if isinstance(v, bytes) else str(v) for v in values]
    return {
        "code": reply.code,
        "id": reply.id,
        "response_authenticator_ok": bool(sent.VerifyReply(reply, raw_reply)),
        "message_authenticator_ok": bool(reply.verify_message_authenticator(original_authenticator=sent.authenticator)),
        "message_authenticator_first": len(raw_reply) > 21 and raw_reply[20] == 80,
        "attributes": attributes,
    }


if __name__ == "__main__":
    command = sys.argv[1]
    secret = sys.argv[2].encode()
    if command == "request":
        print(json.dumps(request(secret, sys.argv[3], sys.argv[4], "--without-message-authenticator" not in sys.argv)))
    elif command == "verify":
        print(json.dumps(verify(secret, sys.argv[3], sys.argv[4])))
    else:
        sys.exit("unknown command " + command)
