"""Replies of Python's SOAP and XML-RPC clients set beside wsbench's payload
catalogue: the catalogue as the suite writes it (payload_json prints the
json codec's bodies), each client's reply or expected reply in a shape to
compare, and a deep comparison allowing the double rounding the xmlrpc
codec declares. Shared by the Python runtime driver and the interop tests."""
import base64
import json
import math
import subprocess
import xmlrpc.client

# xmlrpc-c's double formatting and parsing move a value by at most 17 ulps
# (src/xmlrpc/xmlrpc_codec.cpp); the suite's own xmlrpc tests allow 1e-14.
RELATIVE_TOLERANCE = 1e-14


def catalogue(payload_json, labels):
    """label -> the payload as a dict of the json codec's body."""
    out = subprocess.run([payload_json, *labels], check=True, capture_output=True, text=True)
    bodies = out.stdout.splitlines()
    assert len(bodies) == len(labels), "payload_json printed %d lines for %d labels" % (
        len(bodies), len(labels))
    return {label: json.loads(body) for label, body in zip(labels, bodies)}


def difference(got, want, where="reply"):
    """The first place where `got` differs from `want`, or None."""
    if isinstance(want, float) or isinstance(got, float):
        if not isinstance(got, (int, float)) or not isinstance(want, (int, float)):
            return "%s: %r is not a number like %r" % (where, got, want)
        if not math.isclose(got, want, rel_tol=RELATIVE_TOLERANCE, abs_tol=1e-300):
            return "%s: %r != %r" % (where, got, want)
        return None
    if isinstance(want, dict):
        if not isinstance(got, dict):
            return "%s: %s, not a struct" % (where, type(got).__name__)
        if set(got) != set(want):
            return "%s: members %s, want %s" % (where, sorted(got), sorted(want))
        for key in want:
            found = difference(got[key], want[key], "%s.%s" % (where, key))
            if found:
                return found
        return None
    if isinstance(want, (list, tuple)):
        if not isinstance(got, (list, tuple)) or len(got) != len(want):
            return "%s: %r items, want %d" % (
                where, len(got) if isinstance(got, (list, tuple)) else got, len(want))
        for i, (g, w) in enumerate(zip(got, want)):
            found = difference(g, w, "%s[%d]" % (where, i))
            if found:
                return found
        return None
    if type(got) is not type(want) or got != want:
        return "%s: %s %r != %s %r" % (where, type(got).__name__, shorten(got),
                                       type(want).__name__, shorten(want))
    return None


def shorten(value):
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


# What the json codec's body of a payload is as xmlrpc.client reads the
# XML-RPC codec's (src/xmlrpc/xmlrpc_codec.cpp has the table): 64-bit
# fields as `int64` makes them, base64 as Binary, buildings as structs.


def xmlrpc_message(m, int64):
    out = {k: m[k] for k in ("recipient", "sender", "authToken")}
    out["timestamp"] = int64(m["timestamp"])
    if "records" in m:
        out["records"] = [dict(r, sequence=int64(r["sequence"]), created=int64(r["created"]))
                          for r in m["records"]]
    if "attachment" in m:
        out["attachment"] = xmlrpc.client.Binary(base64.b64decode(m["attachment"]))
    return out


def xmlrpc_expected(body, int64):
    (kind, value), = body.items()
    if kind == "message":
        return {"message": xmlrpc_message(value, int64)}
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


def binaries_as_bytes(value):
    """Binary compares by identity in deep structures: make it bytes."""
    if isinstance(value, xmlrpc.client.Binary):
        return value.data
    if isinstance(value, dict):
        return {k: binaries_as_bytes(v) for k, v in value.items()}
    if isinstance(value, list):
        return [binaries_as_bytes(v) for v in value]
    return value


# zeep's replies in the json codec's shape (src/rest/json_codec.cpp), to
# compare with payload_json's bodies.

def zeep_message(m):
    out = {k: m[k] for k in ("recipient", "sender", "authToken", "timestamp")}
    if m["record"]:
        out["records"] = m["record"]
    if m["attachment"] is not None:
        out["attachment"] = base64.b64encode(m["attachment"]).decode()
    return out


def zeep_feature(member):
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


def zeep_payload(reply):
    from zeep.helpers import serialize_object  # only zeep's users need zeep

    chosen = {k: v for k, v in serialize_object(reply, dict).items() if v is not None}
    if len(chosen) != 1:
        return {"not one payload": sorted(chosen)}
    (kind, v), = chosen.items()
    if kind in ("ints", "strings"):
        return {kind: v["item"]}
    if kind == "objects":
        return {kind: v["object"]}
    if kind == "message":
        return {kind: zeep_message(v)}
    if kind == "binary":
        return {kind: base64.b64encode(v).decode()}
    if kind == "buildings":
        return {kind: {"type": "FeatureCollection",
                       "features": [zeep_feature(m) for m in v["featureMember"]]}}
    return {kind: v}
