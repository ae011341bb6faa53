"""REDbot (HTTP lint, a third party's reading of RFC 9110/9111/9112) over
every endpoint of wsbench-server's HTTP/1.1 stacks: beast's REST routes,
gsoap's WSDL, schema and SOAP calls, xmlrpc-c's XML-RPC calls.

Run by redbot_test.sh inside the venv REDbot is installed in, with the
endpoints wsbench-server printed. Prints every note REDbot makes per
endpoint; fails on a note of level "bad" that ALLOWED does not list.
--doc checks that docs/servers/http-conformance.md shows the allowlist.
"""

import argparse
import http.client
import json
import multiprocessing
import re
import sys
from configparser import ConfigParser

import thor
from redbot.resource import HttpResource

# REDbot notes of level "bad" that are not a fault of the server: note id
# -> why. Every entry says why; an entry names REDbot's note class.
ALLOWED = {}


def allowlist_markdown():
    """ALLOWED as docs/servers/http-conformance.md shows it."""
    if not ALLOWED:
        return "The allowlist is empty: no endpoint gets a note of level \"bad\".\n"
    rows = "".join(f"| `{note}` | {why} |\n" for note, why in sorted(ALLOWED.items()))
    return "| REDbot note | why it is allowed |\n|---|---|\n" + rows


def plain_request(host, method, path, headers=None, body=None):
    """One request outside REDbot, for set-up (a queue to check)."""
    conn = http.client.HTTPConnection(host, timeout=10)
    conn.request(method, path, body=body, headers=headers or {})
    reply = conn.getresponse()
    data = reply.read()
    conn.close()
    return reply, data


def endpoints(beast, gsoap, xmlrpc):
    """(label, method, url, headers, body) for every endpoint."""
    json_type = "application/json"
    accept = [("Accept", json_type)]
    _, message = plain_request(beast, "GET", "/payloads/message-a/100", {"Accept": json_type})
    created, _ = plain_request(beast, "POST", "/queues")
    queue = created.getheader("Location")
    gone, _ = plain_request(beast, "POST", "/queues")
    gone_queue = gone.getheader("Location")
    _, wsdl = plain_request(gsoap, "GET", "/?wsdl")
    namespace = re.search(rb'targetNamespace="([^"]*)"', wsdl).group(1).decode()
    envelope = (
        '<?xml version="1.0"?><SOAP-ENV:Envelope '
        'xmlns:SOAP-ENV="http://schemas.xmlsoap.org/soap/envelope/" '
        f'xmlns:ns="{namespace}"><SOAP-ENV:Body><ns:ping/></SOAP-ENV:Body></SOAP-ENV:Envelope>'
    )
    call = (
        '<?xml version="1.0"?><methodCall><methodName>wsbench.ping</methodName>'
        "<params/></methodCall>"
    )
    b = f"http://{beast}"
    return [
        ("beast GET /ping", "GET", f"{b}/ping", accept, b""),
        ("beast GET /payloads/<label>", "GET", f"{b}/payloads/ints/200", accept, b""),
        ("beast POST /echo", "POST", f"{b}/echo", accept + [("Content-Type", json_type)], message),
        ("beast POST /queues", "POST", f"{b}/queues", accept, b""),
        ("beast PUT /queues/<id>", "PUT", f"{b}{queue}", [("Content-Type", json_type)], message),
        ("beast GET /queues/<id>", "GET", f"{b}{queue}", accept, b""),
        ("beast DELETE /queues/<id>", "DELETE", f"{b}{gone_queue}", [], b""),
        ("beast GET /primes/<n>", "GET", f"{b}/primes/10", accept, b""),
        ("beast GET /words/<w>", "GET", f"{b}/words/zebra", accept, b""),
        ("beast PUT /words/<w>", "PUT", f"{b}/words/apple",
         [("Content-Type", "text/plain")], b"a fruit"),
        ("gsoap GET /?wsdl", "GET", f"http://{gsoap}/?wsdl", [], b""),
        ("gsoap GET /xop.xsd", "GET", f"http://{gsoap}/xop.xsd", [], b""),
        ("gsoap POST / (SOAP call)", "POST", f"http://{gsoap}/",
         [("Content-Type", "text/xml; charset=utf-8"), ("SOAPAction", '""')],
         envelope.encode()),
        ("xmlrpc-c POST /RPC2 (XML-RPC call)", "POST", f"http://{xmlrpc}/RPC2",
         [("Content-Type", "text/xml")], call.encode()),
        # Refusals are replies too.
        ("beast GET /nowhere (404)", "GET", f"{b}/nowhere", accept, b""),
        ("beast DELETE /ping (405)", "DELETE", f"{b}/ping", [], b""),
        ("gsoap GET /nowhere (404)", "GET", f"http://{gsoap}/nowhere", [], b""),
        ("gsoap DELETE / (405)", "DELETE", f"http://{gsoap}/", [], b""),
        ("xmlrpc-c GET /RPC2 (405)", "GET", f"http://{xmlrpc}/RPC2", [], b""),
        ("xmlrpc-c POST /nowhere (404)", "POST", f"http://{xmlrpc}/nowhere",
         [("Content-Type", "text/xml")], call.encode()),
    ]


def notes_of(resource):
    """The check's notes, as REDbot's own reports list them: the response's,
    which its active checks (conneg, validation, ranges) add to as well."""
    return [
        {
            "id": note.__class__.__name__,
            "level": note.level.value,
            "subject": note.subject,
            "summary": str(note.summary),
        }
        for note in resource.response.notes
    ]


def check(method, url, headers, body):
    """REDbot's notes on one request, made in a process of its own: thor's
    loop and connection pool do not carry over from one check to the next."""
    with multiprocessing.get_context("fork").Pool(1) as pool:
        return pool.apply(check_here, (method, url, headers, body))


def check_here(method, url, headers, body):
    if body:
        # thor sends a body without a length chunked.
        headers = headers + [("Content-Length", str(len(body)))]
    config = ConfigParser()
    config.read_dict({"redbot": {"enable_local_access": "True"}})
    resource = HttpResource(config["redbot"])
    resource.set_request(url, method=method, headers=headers, content=body)
    resource.once("check_done", thor.stop)
    resource.check()
    thor.run()
    status = resource.response.status_code
    error = resource.fetch_error.desc if resource.fetch_error else ""
    return status, error, notes_of(resource)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--beast", required=True)
    parser.add_argument("--gsoap", required=True)
    parser.add_argument("--xmlrpc", required=True)
    parser.add_argument("--json", help="also write the findings here")
    parser.add_argument("--doc", help="the page that must show the allowlist")
    args = parser.parse_args()
    findings, failures = [], []
    if args.doc:
        with open(args.doc, encoding="utf-8") as page:
            if allowlist_markdown() not in page.read():
                failures.append(f"allowlist: {args.doc} does not show it as:\n{allowlist_markdown()}")
    for label, method, url, headers, body in endpoints(args.beast, args.gsoap, args.xmlrpc):
        status, error, notes = check(method, url, headers, body)
        findings.append({"endpoint": label, "status": status, "error": error, "notes": notes})
        print(f"== {label}: {status} {error}")
        if error:
            failures.append(f"{label}: REDbot could not fetch it: {error}")
        for n in notes:
            allowed = n["level"] == "bad" and n["id"] in ALLOWED
            mark = " (allowed: " + ALLOWED[n["id"]] + ")" if allowed else ""
            print(f"   [{n['level']}] {n['id']}: {n['summary']}{mark}")
            if n["level"] == "bad" and not allowed:
                failures.append(f"{label}: {n['id']}: {n['summary']}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as out:
            json.dump({"findings": findings, "allowed": ALLOWED}, out, indent=1)
    for f in failures:
        print("FAIL:", f)
    failed = len({f.split(":")[0] for f in failures})
    print(f"{len(findings) + bool(args.doc) - failed} passed, {failed} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
