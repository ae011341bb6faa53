#!/usr/bin/env python3
"""A connection kept alive after a large echo gives the memory back once
it idles, measured on a wsbench-server process of its own: the server's
RSS returns to within 4 MiB of what it was before the echo, and the
connection still serves. beast and beast-tls keep a connection's buffers
between back-to-back calls and free them after
ServerLimits::idle_release_ms; gsoap and gsoap-tls free a request's
memory once it is answered. beast with --idle-release-ms 0 (never) must
keep the memory: the check can fail. glibc's mmap threshold is fixed (MALLOC_MMAP_THRESHOLD_),
as in every memory test here: its dynamic threshold would keep freed
blocks of up to 32 MiB in its arena, counted as if the server held them.

Usage: idle_release_test.py WSBENCH_SERVER
"""
import os
import re
import socket
import ssl
import subprocess
import sys
import time
import unittest

SERVER = sys.argv.pop(1) if len(sys.argv) > 1 else "build/release/wsbench-server"
ECHOED = 24 << 20
SLACK = 4 << 20
RELEASE_MS = 300
STACKS = ("beast", "beast-tls", "gsoap", "gsoap-tls")
SOAP_ECHO = (b'<?xml version="1.0" encoding="UTF-8"?>\n<SOAP-ENV:Envelope xmlns:SOAP-ENV='
             b'"http://schemas.xmlsoap.org/soap/envelope/" xmlns:wsb="urn:wsbench">'
             b"<SOAP-ENV:Body><wsb:echo><wsb:payload><wsb:text>%s</wsb:text></wsb:payload>"
             b"</wsb:echo></SOAP-ENV:Body></SOAP-ENV:Envelope>")


def rss_bytes(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no VmRSS")


class Server:
    def __init__(self, release_ms):
        env = dict(os.environ, MALLOC_MMAP_THRESHOLD_="262144")
        self.proc = subprocess.Popen(
            [SERVER, "--only", "--idle-release-ms", str(release_ms)]
            + [arg for stack in STACKS for arg in ("--listen", stack + "=127.0.0.1:0")],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
        self.ports = {}
        while len(self.ports) < len(STACKS):
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError("wsbench-server ended before listening")
            m = re.match(r"([a-z-]+) 127\.0\.0\.1:(\d+)", line)
            if m:
                self.ports[m.group(1)] = int(m.group(2))

    def close(self):
        self.proc.terminate()
        self.proc.wait(timeout=30)


class Connection:
    def __init__(self, port, tls, soap):
        self.soap = soap
        sock = socket.create_connection(("127.0.0.1", port), timeout=30)
        if tls:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE  # the server's certificate is made at run time
            sock = context.wrap_socket(sock, server_hostname="localhost")
        self.sock = sock
        self.pending = b""

    def echo(self, size):
        """An echo of a text of `size` bytes (JSON, or a SOAP call); the
        reply's status and body length (the body is read and dropped)."""
        if self.soap:
            body = SOAP_ECHO % (b"a" * size)
            head = b'POST / HTTP/1.1\r\nContent-Type: text/xml; charset=utf-8\r\nSOAPAction: ""\r\n'
        else:
            body = b'{"text":"' + b"a" * size + b'"}'
            head = (b"POST /echo HTTP/1.1\r\nContent-Type: application/json\r\n"
                    b"Accept: application/json\r\n")
        self.sock.sendall(head + b"Host: localhost\r\nContent-Length: " + str(len(body)).encode()
                          + b"\r\n\r\n" + body)
        data = self.pending
        while b"\r\n\r\n" not in data:
            data += self.sock.recv(1 << 16)
        head, rest = data.split(b"\r\n\r\n", 1)
        length = int(re.search(rb"(?i)\r\ncontent-length: *(\d+)", head).group(1))
        got = len(rest)
        while got < length:
            chunk = self.sock.recv(1 << 20)
            if not chunk:
                raise RuntimeError("the server closed mid-reply")
            got += len(chunk)
        self.pending = b""
        return int(head[9:12]), length


def idle_growth(server, stack):
    """RSS over the baseline once the connection has idled (polled up to
    5 s), and right after the large echo's reply."""
    conn = Connection(server.ports[stack], stack.endswith("-tls"), stack.startswith("gsoap"))
    assert conn.echo(1024)[0] == 200
    baseline = rss_bytes(server.proc.pid)
    status, length = conn.echo(ECHOED)
    assert status == 200 and length > ECHOED, (status, length)
    after = rss_bytes(server.proc.pid) - baseline
    idle = after
    for _ in range(50):
        if idle <= SLACK:
            break
        time.sleep(0.1)
        idle = rss_bytes(server.proc.pid) - baseline
    assert conn.echo(1024)[0] == 200, "the idle connection no longer serves"
    conn.sock.close()
    return idle, after


class IdleRelease(unittest.TestCase):
    def test_memory_comes_back_once_idle(self):
        server = Server(RELEASE_MS)
        try:
            for stack in STACKS:
                idle, after = idle_growth(server, stack)
                print(f"{stack}: +{after / 2**20:.1f} MiB after the reply, "
                      f"+{idle / 2**20:.1f} MiB once idle")
                self.assertLessEqual(idle, SLACK, f"{stack} keeps {idle / 2**20:.1f} MiB")
        finally:
            server.close()

    def test_without_release_the_memory_stays(self):
        server = Server(0)
        try:
            idle, _ = idle_growth(server, "beast")
            self.assertGreater(idle, 16 << 20, "the check would pass without the release")
        finally:
            server.close()


if __name__ == "__main__":
    unittest.main(verbosity=2)
