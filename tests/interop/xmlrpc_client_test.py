"""Python's xmlrpc.client against both XML-RPC servers of wsbench-server
(xmlrpc-c at /RPC2, and the beast stack's xmlrpc route, which wants the
X-Wsbench-Codec header): every method, every payload kind, each reply
compared with the catalogue. 64-bit fields come as decimal strings for
calls to /RPC2?int64=string (the standard mapping), which is what lets a
standard client send a message back."""
import copy
import xmlrpc.client

from common import run_on_both_stacks
from wsbench_replies import binaries_as_bytes, xmlrpc_expected

def primes_reply(n):
    found = []
    candidate = 2
    while len(found) < n:
        if all(candidate % p for p in found if p * p <= candidate):
            found.append(candidate)
        candidate += 1
    return "FIRST %d numbers:%s" % (n, "".join(" %d" % p for p in found))


def run(checks, name, address, on_beast, payloads):
    headers = [("X-Wsbench-Codec", "xmlrpc")] if on_beast else []

    def proxy(query=""):
        return xmlrpc.client.ServerProxy("http://%s/RPC2%s" % (address, query), headers=headers)

    standard = proxy("?int64=string")
    extension = proxy()
    checks.equal(name + " ping", standard.wsbench.ping(), "pong")

    for label, body in payloads.items():
        want = binaries_as_bytes(xmlrpc_expected(body, str))
        got = standard.wsbench.get(label)
        checks.same("%s get %s (int64=string)" % (name, label), binaries_as_bytes(got), want)
        echoed = standard.wsbench.echo(got)
        checks.same("%s echo %s (int64=string)" % (name, label), binaries_as_bytes(echoed), want)
        # <i8>, the default: xmlrpc.client reads it, and the server reads
        # the decimal strings a standard client sends back.
        want_i8 = binaries_as_bytes(xmlrpc_expected(body, int))
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
