#!/usr/bin/python3
"""A key holder's client of `nicmatrix serve --allow-control`, for tests that play a hostile client (and a
module: tests/package/agent_kinds.py opens its session with AgentSession).

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


class AgentSession:
    """An authenticated settings session with an agent, as the sweep opens it: `challenge` is the agent's
    challenge (its kinds, what is unavailable, its protocol), `welcome` its answer to the proof (a
    welcome, or an error when the key is not the agent's)."""

    def __init__(self, host, port, key, timeout=10):
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.reader = self.sock.makefile("rb")
        self.seq = 0
        client_nonce = os.urandom(32).hex()
        self.sock.sendall((canonical({"type": "control_hello", "client_nonce": client_nonce, "v": VERSION}) + "\n").encode())
        # The proofs cover the challenge's line as received (control protocol 2).
        transcript = self.receive_line()
        self.challenge = json.loads(transcript)
        if self.challenge.get("type") != "challenge":
            sys.exit("agent_client: expected a challenge, got " + transcript)
        nonce = self.challenge["nonce"]
        proof = mac(key, nonce + client_nonce + "nicmatrix/control/v1 client\n" + transcript)
        self.sock.sendall((canonical({"type": "auth", "mac": proof, "v": VERSION}) + "\n").encode())
        self.welcome = self.receive()
        self.session_key = mac(key, nonce + client_nonce + "nicmatrix/control/v1 session").encode()

    def receive_line(self):
        line = self.reader.readline()
        if not line:
            sys.exit("agent_client: the agent closed the connection")
        return line.decode().rstrip("\n")

    def receive(self):
        return json.loads(self.receive_line())

    def send_request(self, body):
        """`body` ({"op": ...}) as the next request: type, seq and v added, and the MAC over the line's bytes
        as its last member (core/control/message_auth.hpp sign_text)."""
        self.seq += 1
        text = canonical(dict(body, type="request", seq=self.seq, v=VERSION))
        signed = text[:-1] + ',"mac":"' + mac(self.session_key, "client->agent\n" + text) + '"}'
        self.sock.sendall((signed + "\n").encode())

    def close(self):
        self.sock.close()


def main():
    host, port, key_file = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    with open(key_file, "rb") as f:
        key = f.read()
    session = AgentSession(host, port, key)
    print(canonical(session.welcome), flush=True)
    for line in (l for l in sys.stdin if l.strip()):
        session.send_request(json.loads(line))
        print(canonical(session.receive()), flush=True)


if __name__ == "__main__":
    main()
