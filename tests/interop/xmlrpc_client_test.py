"""Python's xmlrpc.client against both XML-RPC servers of wsbench-server
(xmlrpc-c at /RPC2, and the beast stack's xmlrpc route, which wants the
X-Wsbench-Codec header): every method, every payload kind, each reply
compared with the catalogue. 64-bit fields come as decimal strings for
calls to /RPC2?int64=string (the standard mapping), which is what lets a
standard client send a message back."""
import base64
import copy
import xmlrpc.client

from common import run_on_both_stacks

# What the json codec's body of a payload is as xmlrpc.client reads the
# XML-RPC codec's (src/xmlrpc/xmlrpc_codec.cpp has the table): 64-bit
# fields as `int64` makes them, base64 as Binary, buildings as structs.


def message(m, int64):
    out = {k: m[k] for k in ("recipient", "sender", "authToken")}
    out["timestamp"] = int64(m["timestamp"])
    if "records" in m:
        out["records"] = [dict(r, sequence=int64(r["sequence"]), created=int64(r["created"]))
                          for r in m["records"]]
    if "attachment" in m:
        out["attachment"] = xmlrpc.client.Binary(base64.b64decode(m["attachment"]))
    return out


def expected(body, int64):
    (kind, value), = body.items()
    if kind == "message":
        return {"message": message(value, int64)}
    if kind == "binary":
        return {"binary": xmlrpc.client.Binary(base64.b64decode(value))}
    if kind == "buildings":
        return {"buildings": [{
            "id": f["id"],
            "name": f["properties"]["name"],
            "height": f["properties"]["height"],
            "floors": f["properties"]["floors"],
            "footprint": f["geometry"]["coordinates"][0],
        } for f in value["features"]]}
    return body


def primes_reply(n):
    found = []
    candidate = 2
    while len(found) < n:
        if all(candidate % p for p in found if p * p <= candidate):
            found.append(candidate)
        candidate += 1
    return "FIRST %d numbers:%s" % (n, "".join(" %d" % p for p in found))


def binaries_as_bytes(value):
    """Binary compares by identity in deep structures: make it bytes."""
    if isinstance(value, xmlrpc.client.Binary):
        return value.data
    if isinstance(value, dict):
        return {k: binaries_as_bytes(v) for k, v in value.items()}
    if isinstance(value, list):
        return [binaries_as_bytes(v) for v in value]
    return value


def run(checks, name, address, on_beast, payloads):
    headers = [("X-Wsbench-Codec", "xmlrpc")] if on_beast else []

    def proxy(query=""):
        return xmlrpc.client.ServerProxy("http://%s/RPC2%s" % (address, query), headers=headers)

    standard = proxy("?int64=string")
    extension = proxy()
    checks.equal(name + " ping", standard.wsbench.ping(), "pong")

    for label, body in payloads.items():
        want = binaries_as_bytes(expected(body, str))
        got = standard.wsbench.get(label)
        checks.same("%s get %s (int64=string)" % (name, label), binaries_as_bytes(got), want)
        echoed = standard.wsbench.echo(got)
        checks.same("%s echo %s (int64=string)" % (name, label), binaries_as_bytes(echoed), want)
        # <i8>, the default: xmlrpc.client reads it, and the server reads
        # the decimal strings a standard client sends back.
        want_i8 = binaries_as_bytes(expected(body, int))
        checks.same("%s get %s (i8)" % (name, label),
                    binaries_as_bytes(extension.wsbench.get(label)), want_i8)
        checks.same("%s echo of the string form %s (i8 reply)" % (name, label),
                    binaries_as_bytes(extension.wsbench.echo(got)), want_i8)

    sent = standard.wsbench.get("message-a/100")["message"]
    queue = standard.wsbench.registerClient()
    checks.equal(name + " registerClient gives a queue id", isinstance(queue, str) and queue != "",
                 True)
    checks.equal(name + " sendMessage", standard.wsbench.sendMessage(queue, sent), True)
    small = copy.deepcopy(sent)
    small["records"] = small["records"][:2]
    small["timestamp"] = 7  # a 64-bit field as <int>, as Python sends small values
    checks.equal(name + " sendMessage with an <int> timestamp",
                 standard.wsbench.sendMessage(queue, small), True)
    small["timestamp"] = "7"
    received = standard.wsbench.receiveMessages(queue)
    checks.same(name + " receiveMessages", binaries_as_bytes(received),
                binaries_as_bytes({"messages": [sent, small]}))
    checks.same(name + " receiveMessages again: empty", standard.wsbench.receiveMessages(queue),
                {"messages": []})
    checks.equal(name + " unregisterClient", standard.wsbench.unregisterClient(queue), True)
    fault = checks.raises(name + " receiveMessages after unregister: fault",
                          xmlrpc.client.Fault, lambda: standard.wsbench.receiveMessages(queue))
    if fault:
        checks.equal(name + " ... with code 404", fault.faultCode, 404)

    for n in (0, 1, 10, 1000):
        checks.equal("%s primes(%d)" % (name, n), standard.wsbench.primes(n), primes_reply(n))

    bad = copy.deepcopy(sent)
    bad["timestamp"] = "12x"
    fault = checks.raises(name + " echo with a timestamp '12x': fault", xmlrpc.client.Fault,
                          lambda: standard.wsbench.echo({"message": bad}))
    if fault:
        checks.equal(name + " ... with code 400", fault.faultCode, 400)
    fault = checks.raises(name + " int64=i9: fault", xmlrpc.client.Fault,
                          lambda: proxy("?int64=i9").wsbench.ping())
    if fault:
        checks.equal(name + " ... with code 400", fault.faultCode, 400)
    checks.raises(name + " unknown method: fault", xmlrpc.client.Fault,
                  lambda: standard.wsbench.nothing())

    if not on_beast:  # the beast route has no system.* methods
        calls = xmlrpc.client.MultiCall(standard)
        calls.wsbench.ping()
        calls.wsbench.primes(3)
        calls.wsbench.get("ints/200")
        checks.same(name + " system.multicall", list(calls()),
                    ["pong", primes_reply(3), payloads["ints/200"]])


if __name__ == "__main__":
    run_on_both_stacks(__doc__, "xmlrpc-c", run)
