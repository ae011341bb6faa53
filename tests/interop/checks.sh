# Sourced by the curl interop tests: check <what> <got> <want> prints ok or
# FAIL and counts failures in $failed; finish prints the count and fails
# the script if any check did.
failed=0
check() {
  if [ "$2" = "$3" ]; then
    echo "ok: $1"
  else
    echo "FAIL: $1: got '${2:0:300}', want '${3:0:300}'"
    failed=$((failed + 1))
  fi
}
finish() {
  echo "$failed failed"
  [ "$failed" = 0 ]
}
