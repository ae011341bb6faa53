#!/usr/bin/env bash
# curl_rest_test.sh BEAST PAYLOAD_JSON: curl calls every REST route of the
# beast stack in every content type (application/json, application/xml,
# application/x-protobuf, text/plain where a route takes text) and checks
# status, Content-Type and body: JSON bodies against the catalogue
# (payload_json), XML and protobuf bodies by echoing them back byte for byte.
set -euo pipefail
beast=$1
payload_json=$2
base="http://$beast"
source "$(dirname "$0")/checks.sh"

dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
# request <out file> <curl options...>: prints "status content-type".
request() {
  local out=$1
  shift
  curl -s -o "$out" -w '%{http_code} %{content_type}' "$@"
}
json=application/json
xml=application/xml
protobuf=application/x-protobuf

# GET /ping and GET /primes/{n}: text in every format.
check "GET /ping text/plain" "$(request "$dir/b" -H 'Accept: text/plain' "$base/ping") $(cat "$dir/b")" \
  "200 text/plain; charset=utf-8 pong"
check "GET /ping json" "$(request "$dir/b" -H "Accept: $json" "$base/ping") $(cat "$dir/b")" \
  "200 $json {\"text\":\"pong\"}"
primes="FIRST 10 numbers: 2 3 5 7 11 13 17 19 23 29"
check "GET /primes/10 text/plain" \
  "$(request "$dir/b" -H 'Accept: text/plain' "$base/primes/10") $(cat "$dir/b")" \
  "200 text/plain; charset=utf-8 $primes"
check "GET /primes/10 json" "$(request "$dir/b" -H "Accept: $json" "$base/primes/10") $(cat "$dir/b")" \
  "200 $json {\"text\":\"$primes\"}"
for type in $xml $protobuf; do
  check "GET /ping $type" "$(request "$dir/b" -H "Accept: $type" "$base/ping")" "200 $type"
  check "... has a body" "$([ -s "$dir/b" ] && echo yes)" yes
  check "GET /primes/10 $type" "$(request "$dir/b" -H "Accept: $type" "$base/primes/10")" "200 $type"
  grep -qa "$primes" "$dir/b" && found=yes || found=no
  check "... carries the primes" "$found" yes
done

# GET /payloads/{label}, then POST /echo of what came back, per format.
labels=(text ints/200 strings/200:escaped objects/200 message-a/100 message-b/64KiB binary/64KiB gml/10)
mapfile -t want < <("$payload_json" "${labels[@]}")
for i in "${!labels[@]}"; do
  label=${labels[$i]}
  check "GET /payloads/$label json" \
    "$(request "$dir/got" -H "Accept: $json" "$base/payloads/$label") $(cat "$dir/got")" \
    "200 $json ${want[$i]}"
  check "POST /echo $label json" \
    "$(request "$dir/echoed" -H "Content-Type: $json" --data-binary "@$dir/got" "$base/echo") $(cat "$dir/echoed")" \
    "200 $json ${want[$i]}"
  for type in $xml $protobuf; do
    check "GET /payloads/$label $type" \
      "$(request "$dir/got" -H "Accept: $type" "$base/payloads/$label")" "200 $type"
    check "POST /echo $label $type" \
      "$(request "$dir/echoed" -H "Content-Type: $type" --data-binary "@$dir/got" "$base/echo")" \
      "200 $type"
    cmp -s "$dir/got" "$dir/echoed" && same=yes || same=no
    check "... the same bytes back" "$same" yes
    # Across formats: what came back in this format, echoed as JSON.
    check "... as JSON again" \
      "$(request "$dir/b" -H "Content-Type: $type" -H "Accept: $json" --data-binary "@$dir/got" "$base/echo") $(cat "$dir/b")" \
      "200 $json ${want[$i]}"
  done
done
check "GET /payloads/text text/plain" \
  "$(request "$dir/b" -H 'Accept: text/plain' "$base/payloads/text") $(cat "$dir/b")" \
  "200 text/plain; charset=utf-8 Hello from wsbench"
check "POST /echo text/plain" \
  "$(request "$dir/b" -H 'Content-Type: text/plain' --data-binary 'plain words' "$base/echo") $(cat "$dir/b")" \
  "200 text/plain; charset=utf-8 plain words"

# The queues: POST, PUT a message in each format, GET in each, DELETE.
message=${want[4]}  # message-a/100
inner=${message#\{\"message\":}
inner=${inner%\}}
for type in $json $xml $protobuf; do
  request "$dir/message.${type#*/}" -H "Accept: $type" "$base/payloads/message-a/100" >/dev/null
done
created=$(curl -si -X POST "$base/queues" | tr -d '\r')
check "POST /queues: 201" "$(head -1 <<<"$created" | cut -d' ' -f2)" 201
queue=$(awk 'tolower($1) == "location:" { print $2 }' <<<"$created")
check "POST /queues: Location /queues/{id}" "${queue%/*}" /queues
for type in $json $xml $protobuf; do
  check "PUT $queue $type" \
    "$(request "$dir/b" -X PUT -H "Content-Type: $type" --data-binary "@$dir/message.${type#*/}" "$base$queue")" \
    "204 "
done
check "GET $queue json: the three messages" \
  "$(request "$dir/b" -H "Accept: $json" "$base$queue") $(cat "$dir/b")" \
  "200 $json {\"messages\":[$inner,$inner,$inner]}"
for type in $xml $protobuf; do
  curl -s -o /dev/null -X PUT -H "Content-Type: $json" --data-binary "$message" "$base$queue"
  check "GET $queue $type" "$(request "$dir/b" -H "Accept: $type" "$base$queue")" "200 $type"
  check "... has a body" "$([ -s "$dir/b" ] && echo yes)" yes
done
check "GET $queue: empty now" "$(request "$dir/b" -H "Accept: $json" "$base$queue") $(cat "$dir/b")" \
  "200 $json {\"messages\":[]}"
check "DELETE $queue" "$(request "$dir/b" -X DELETE "$base$queue")" "204 "
check "GET $queue after DELETE" "$(request "$dir/b" "$base$queue" | cut -d' ' -f1)" 404

# Refusals a curl user meets.
check "an unknown route: 404" "$(request "$dir/b" "$base/nowhere" | cut -d' ' -f1)" 404
check "DELETE /ping: 405" "$(request "$dir/b" -X DELETE "$base/ping" | cut -d' ' -f1)" 405
check "POST /echo as image/png: 415" \
  "$(request "$dir/b" -H 'Content-Type: image/png' --data-binary x "$base/echo" | cut -d' ' -f1)" 415

finish
