"""zeep (python3-zeep) against both SOAP servers of wsbench-server (the gsoap
stack, and the beast stack's soap route, which wants the X-Wsbench-Codec
header): loads the WSDL from the server with every non-loopback URL
refused, then calls every operation and compares each reply with the
catalogue. The WSDL must bring everything it needs from the server itself:
the GML subset inline, the XOP schema from /xop.xsd."""
import urllib.parse

import zeep
from zeep.helpers import serialize_object

from common import run_on_both_stacks
from wsbench_replies import zeep_message, zeep_payload

LOOPBACK = {"127.0.0.1", "localhost", "::1"}


class LoopbackOnly(zeep.Transport):
    """A transport that refuses to leave the machine and notes what it fetched."""

    def __init__(self, headers):
        super().__init__()
        self.session.trust_env = False  # no proxy from the environment
        self.session.headers.update(headers)
        self.fetched = []

    def _check(self, url):
        parts = urllib.parse.urlsplit(url)
        if parts.scheme in ("http", "https") and parts.hostname not in LOOPBACK:
            raise RuntimeError("refused: %s is not on this machine" % url)

    def load(self, url):
        self._check(url)
        self.fetched.append(url)
        return super().load(url)

    def post(self, address, message, headers):
        self._check(address)
        return super().post(address, message, headers)


def run(checks, name, address, on_beast, payloads):
    transport = LoopbackOnly({"X-Wsbench-Codec": "soap"} if on_beast else {})
    wsdl = "http://%s/?wsdl" % address
    client = zeep.Client(wsdl, transport=transport)
    checks.equal(name + ": the WSDL and the XOP schema came from the server",
                 sorted(transport.fetched), sorted([wsdl, "http://%s/xop.xsd" % address]))
    service = client.service

    checks.equal(name + " ping", service.ping(), "pong")
    for label, want in payloads.items():
        if label.endswith(":escaped"):
            continue  # get takes a kind and a size: plain strings only
        kind, _, size = label.partition("/")
        n = int(size[:-3]) * 1024 if size.endswith("KiB") else int(size or 0)
        got = service.get(kind=kind, n=n)
        checks.same("%s get %s" % (name, label), zeep_payload(got), want)
        chosen = {k: v for k, v in serialize_object(got, dict).items() if v is not None}
        checks.same("%s echo %s" % (name, label), zeep_payload(service.echo(payload=chosen)), want)

    sent = service.get(kind="message-a", n=100).message
    want = payloads["message-a/100"]["message"]
    queue = service.RegisterClient()
    checks.equal(name + " RegisterClient gives a queue id", isinstance(queue, str) and queue != "",
                 True)
    service.SendMessage(queue=queue, message=sent)
    service.SendMessage(queue=queue, message=sent)
    received = service.ReceiveMessage(queue=queue)
    checks.same(name + " ReceiveMessage: both messages, in order",
                [zeep_message(serialize_object(m, dict)) for m in received], [want, want])
    checks.same(name + " ReceiveMessage again: none",
                list(service.ReceiveMessage(queue=queue) or []), [])
    service.UnregisterClient(queue=queue)
    checks.raises(name + " ReceiveMessage after UnregisterClient: a SOAP Fault",
                  zeep.exceptions.Fault, lambda: service.ReceiveMessage(queue=queue))
    checks.equal(name + " primes(10)", service.primes(n=10),
                 "FIRST 10 numbers: 2 3 5 7 11 13 17 19 23 29")
    checks.raises(name + " get of an unknown kind: a SOAP Fault", zeep.exceptions.Fault,
                  lambda: service.get(kind="no-such-kind", n=1))


if __name__ == "__main__":
    run_on_both_stacks(__doc__, "gsoap", run)
