#!/usr/bin/env bash
# curl_soap_test.sh GSOAP BEAST DATA_DIR: a hand-written SOAP 1.1 envelope
# (DATA_DIR/soap11_echo_ints.xml) posted with curl to both SOAP servers, the
# gsoap stack and the beast stack's soap route, must come back as the same
# integers; both serve the WSDL and the XOP schema it imports.
set -euo pipefail
gsoap=$1
beast=$2
envelope=$3/soap11_echo_ints.xml
source "$(dirname "$0")/checks.sh"

body=$(mktemp)
trap 'rm -f "$body"' EXIT
call() {  # call <url> [curl options...]: prints "status content-type"
  local url=$1
  shift
  curl -s -o "$body" -w '%{http_code} %{content_type}' -H 'Content-Type: text/xml; charset=utf-8' \
    -H 'SOAPAction: ""' --data-binary "@$envelope" "$@" "$url"
}
# The items of the echoed list, whatever prefix the reply gives them.
items() { grep -o '<[A-Za-z0-9_-]*:item>[^<]*<' "$body" | sed 's/.*>//; s/<$//' | tr '\n' ' '; }
# The reply's element under Body, without its prefix.
reply_element() { grep -o '<[A-Za-z0-9_-]*:Body><[A-Za-z0-9_-]*:[A-Za-z]*' "$body" | sed 's/.*://'; }

for stack in gsoap beast; do
  if [ $stack = gsoap ]; then
    got=$(call "http://$gsoap/")
  else
    got=$(call "http://$beast/" -H 'X-Wsbench-Codec: soap')
  fi
  check "$stack: status and content type" "${got%%;*}" "200 text/xml"
  check "$stack: an echoResponse" "$(reply_element)" "echoResponse"
  check "$stack: the integers sent" "$(items)" "1 -2 2147483647 -2147483648 "
done

# What a toolkit fetches first: the WSDL, and the XOP schema it imports
# (relative to the WSDL, so from the same server), from both servers.
for stack in gsoap beast; do
  address=${!stack}
  headers=()
  [ $stack = beast ] && headers=(-H 'X-Wsbench-Codec: soap')
  wsdl=$(curl -sf "${headers[@]}" "http://$address/?wsdl")
  check "$stack: the WSDL imports the XOP schema from next to itself" \
    "$(grep -o 'schemaLocation="[^"]*"' <<<"$wsdl" | sort -u | tr '\n' ' ')" 'schemaLocation="xop.xsd" '
  check "$stack: the WSDL carries the GML subset it uses" \
    "$(grep -c '<schema targetNamespace="http://www.opengis.net/gml"' <<<"$wsdl")" 1
  check "$stack: the WSDL's calls go to this server" \
    "$(grep -o '<SOAP:address location="[^"]*"' <<<"$wsdl")" "<SOAP:address location=\"http://$address/\""
  check "$stack: GET /xop.xsd: the XOP schema" \
    "$(curl -sf "${headers[@]}" "http://$address/xop.xsd" | grep -o 'targetNamespace="[^"]*"')" \
    'targetNamespace="http://www.w3.org/2004/08/xop/include"'
done
check "beast: a WSDL request without Host: 400" \
  "$(curl -s -o /dev/null -w '%{http_code}' -H 'Host:' -H 'X-Wsbench-Codec: soap' "http://$beast/?wsdl")" 400

finish
