#!/usr/bin/python3
"""A key holder's client of `nicmatrix serve --allow-control`, for tests that play a hostile client.

    agent_client.py HOST PORT KEY_FILE < requests

Authenticates as the sweep does (agent/peer_agent.cpp, core/control/message_auth.cpp: the challenge, the client's
proof over both nonces and the challenge's line as received, the session key) and sends one request per
line of standard input ({"op": ..., ...}; v, type and seq are added, and the MAC over the line's bytes as
its last member), printing each reply as one JSON line.
Every socket operation has a 10 s timeout.
"""
import hashlib
import hmac
import json
import os
import socket
import sys

VERSION = 2   # core/control/control_protocol.hpp kControlVersion


def canonical(obj):
    """The text both ends sign: keys sorted, no blanks, UTF-8 as is (nlohmann's dump)."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def mac(key, text):
    return hmac.new(key, text.encode(), hashlib.sha256).hexdigest()


def main():
    host, port, key_file = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    with open(key_file, "rb") as f:
        key = f.read()
    sock = socket.create_connection((host, port), timeout=10)
    reader = sock.makefile("rb")

    def send(message):
        sock.sendall((canonical(dict(message, v=VERSION)) + "\n").encode())

    def receive_line():
        line = reader.readline()
        if not line:
            sys.exit("agent_client: the agent closed the connection")
        return line.decode().rstrip("\n")

    def receive():
        return json.loads(receive_line())

    client_nonce = os.urandom(32).hex()
    send({"type": "control_hello", "client_nonce": client_nonce})
    transcript = receive_line()
    challenge = json.loads(transcript)
    if challenge.get("type") != "challenge":
        sys.exit("agent_client: expected a challenge, got " + transcript)
    nonce = challenge["nonce"]
    send({"type": "auth", "mac": mac(key, nonce + client_nonce + "nicmatrix/control/v1 client\n" + transcript)})
    print(canonical(receive()), flush=True)
    session = mac(key, nonce + client_nonce + "nicmatrix/control/v1 session").encode()
    for seq, line in enumerate((l for l in sys.stdin if l.strip()), 1):
        text = canonical(dict(json.loads(line), type="request", seq=seq, v=VERSION))
        signed = text[:-1] + ',"mac":"' + mac(session, "client->agent\n" + text) + '"}'
        sock.sendall((signed + "\n").encode())
        print(canonical(receive()), flush=True)


if __name__ == "__main__":
    main()
