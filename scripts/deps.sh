# Sourced by scripts/bench and scripts/test: installs the Debian packages
# wsbench builds against, only those missing, so a second run does nothing.
# shellcheck shell=bash

WSBENCH_PACKAGES=(
  g++ cmake ninja-build pkgconf python3 python3-venv curl
  gsoap libgsoap-dev
  libxmlrpc-c++8-dev libxmlrpc-core-c3-dev libcurl4-openssl-dev
  libboost1.81-dev libboost-program-options1.81-dev
  rapidjson-dev libxml2-dev libprotobuf-dev protobuf-compiler libssl-dev
  libbenchmark-dev libgtest-dev valgrind
  python3-zeep
  wrk nginx-light
  libsqlite3-dev wamerican
  iproute2
)

# scripts/fuzz (and so scripts/test): clang with its sanitizer and
# libFuzzer runtimes.
WSBENCH_FUZZ_PACKAGES=(clang libclang-rt-14-dev libfuzzer-14-dev)

# wsbench_ensure_packages [extra packages...]
wsbench_ensure_packages() {
  local wanted=("${WSBENCH_PACKAGES[@]}" "$@") missing=() pkg
  for pkg in "${wanted[@]}"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' ||
      missing+=("$pkg")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "$(id -u)" -ne 0 ]; then
    echo "wsbench: missing Debian packages: ${missing[*]}" >&2
    echo "wsbench: run as root, or: sudo apt-get install -y ${missing[*]}" >&2
    return 1
  fi
  echo "wsbench: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq && apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# wsbench_build <preset>: configure once, then build incrementally.
wsbench_build() {
  local preset=$1
  if [ ! -f "build/$preset/CMakeCache.txt" ]; then
    cmake --preset "$preset" >/dev/null
  fi
  cmake --build --preset "$preset"
}
