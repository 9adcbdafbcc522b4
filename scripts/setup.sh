#!/usr/bin/env bash
# Installs what ptxforge needs from Debian 12 packages (when missing) and builds it into build/.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${PTXFORGE_BUILD_DIR:-$ROOT/build}"

# The build's compiler is Debian 12's GCC 12 (gcc/g++, named explicitly below); clang-22 only builds the
# libFuzzer targets (scripts/fuzz.sh). A minbase root has neither a compiler nor git, python3 (lit) or the CA
# certificates apt's https sources need, so they are listed too.
PACKAGES=(
  gcc g++ git ca-certificates
  llvm-22-dev llvm-22-tools clang-22 libclang-rt-22-dev
  antlr4 default-jre-headless libantlr4-runtime-dev uuid-dev
  libcli11-dev nlohmann-json3-dev doctest-dev
  libzstd-dev zlib1g-dev liblz4-dev libxxhash-dev libboost-context-dev libmimalloc-dev nettle-dev
  cmake ninja-build pkg-config python3 binutils
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  SUDO=""; [[ $(id -u) -ne 0 ]] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# CC/CXX choose the compiler when the build folder is first configured; later runs keep the cached one.
CC="${CC:-gcc}" CXX="${CXX:-g++}" cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE="${PTXFORGE_BUILD_TYPE:-RelWithDebInfo}" >/dev/null
cmake --build "$BUILD" -j"$(nproc)"
