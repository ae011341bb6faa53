"""zeep (python3-zeep) against both SOAP servers of wsbench-server (the gsoap
stack, and the beast stack's soap route, which wants the X-Wsbench-Codec
header): loads the WSDL from the server with every non-loopback URL
refused, then calls every operation and compares each reply with the
catalogue. The WSDL must bring everything it needs from the server itself:
the GML subset inline, the XOP schema from /xop.xsd."""
import base64
import urllib.parse

import zeep
from zeep.helpers import serialize_object

from common import run_on_both_stacks

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


# The replies in the json codec's shape (src/rest/json_codec.cpp), to compare
# with payload_json's bodies.

def message(m):
    out = {k: m[k] for k in ("recipient", "sender", "authToken", "timestamp")}
    if m["record"]:
        out["records"] = m["record"]
    if m["attachment"] is not None:
        out["attachment"] = base64.b64encode(m["attachment"]).decode()
    return out


def feature(member):
    b = member["Building"]
    numbers = [float(x) for x in b["footprint"]["Polygon"]["exterior"]["LinearRing"]["posList"]
               ["_value_1"].split()]
    return {
        "type": "Feature",
        "id": b["id"],
        "properties": {"name": b["name"], "height": b["height"], "floors": b["floors"]},
        "geometry": {"type": "Polygon",
                     "coordinates": [[[numbers[i], numbers[i + 1]]
                                      for i in range(0, len(numbers), 2)]]},
    }


def payload(reply):
    chosen = {k: v for k, v in serialize_object(reply, dict).items() if v is not None}
    if len(chosen) != 1:
        return {"not one payload": sorted(chosen)}
    (kind, v), = chosen.items()
    if kind in ("ints", "strings"):
        return {kind: v["item"]}
    if kind == "objects":
        return {kind: v["object"]}
    if kind == "message":
        return {kind: message(v)}
    if kind == "binary":
        return {kind: base64.b64encode(v).decode()}
    if kind == "buildings":
        return {kind: {"type": "FeatureCollection",
                       "features": [feature(m) for m in v["featureMember"]]}}
    return {kind: v}


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
        checks.same("%s get %s" % (name, label), payload(got), want)
        chosen = {k: v for k, v in serialize_object(got, dict).items() if v is not None}
        checks.same("%s echo %s" % (name, label), payload(service.echo(payload=chosen)), want)

    sent = service.get(kind="message-a", n=100).message
    want = payloads["message-a/100"]["message"]
    queue = service.RegisterClient()
    checks.equal(name + " RegisterClient gives a queue id", isinstance(queue, str) and queue != "",
                 True)
    service.SendMessage(queue=queue, message=sent)
    service.SendMessage(queue=queue, message=sent)
    received = service.ReceiveMessage(queue=queue)
    checks.same(name + " ReceiveMessage: both messages, in order",
                [message(serialize_object(m, dict)) for m in received], [want, want])
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
