#!/usr/bin/env bash
# Proves README's quick start on a bare machine: builds a Debian 12 minbase root with debootstrap, puts a clean
# clone of this repository's HEAD (and ../shared beside it, as on CI) into it, and runs README's two commands
# there, printing each one's exit status and time. Not part of CI: it needs root and the package mirror.
#
# Usage: scripts/check-fresh.sh [ROOT_DIR]   (default /var/tmp/ptxforge-fresh; an existing one is replaced)
# The mirror is the one this machine's own apt sources name, and the root gets the same suites (for example
# bookworm-security), so it sees exactly the packages this machine would install.
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SHARED="$(cd "$REPO/../shared" 2>/dev/null && pwd || true)"
FRESH="${1:-/var/tmp/ptxforge-fresh}"

die() { echo "check-fresh: $*" >&2; exit 2; }
[[ $(id -u) -eq 0 ]] || die "needs root (debootstrap, chroot, mounts)"

# The first Debian mirror named by apt's sources, in either the one-line or the deb822 format.
apt_mirror() {
  local f
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [[ -r $f ]] || continue
    awk '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i ~ /^(https?|file):/) { print $i; exit } }' "$f"
  done
  for f in /etc/apt/sources.list.d/*.sources; do
    [[ -r $f ]] || continue
    awk 'tolower($1) == "uris:" { print $2 }' "$f"
  done
}
MIRROR="$(apt_mirror | grep -v -- '-security' | head -1)"
[[ -n "$MIRROR" ]] || die "no Debian mirror in /etc/apt/sources.list{,.d}"

if ! command -v debootstrap >/dev/null; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
fi

MOUNTS=()
cleanup() {
  local m
  for ((i = ${#MOUNTS[@]} - 1; i >= 0; i--)); do umount -l "${MOUNTS[i]}" 2>/dev/null || true; done
}
trap cleanup EXIT

if [[ -e "$FRESH" ]]; then
  for m in proc sys dev; do umount -l "$FRESH/$m" 2>/dev/null || true; done
  rm -rf --one-file-system "$FRESH"
fi
echo "check-fresh: debootstrap --variant=minbase bookworm $FRESH $MIRROR"
start=$SECONDS
debootstrap --variant=minbase bookworm "$FRESH" "$MIRROR" >"$FRESH.debootstrap.log" 2>&1 ||
  { tail -20 "$FRESH.debootstrap.log"; die "debootstrap failed"; }
echo "check-fresh: root ready in $((SECONDS - start)) s"

# The same suites as this machine (updates, security), pointing at the same mirrors.
rm -f "$FRESH/etc/apt/sources.list"
cp -a /etc/apt/sources.list "$FRESH/etc/apt/" 2>/dev/null || true
mkdir -p "$FRESH/etc/apt/sources.list.d"
cp -a /etc/apt/sources.list.d/. "$FRESH/etc/apt/sources.list.d/" 2>/dev/null || true

# A clean clone of HEAD: what a new user checks out, without this checkout's build folders or local files.
mkdir -p "$FRESH/work"
COMMIT="$(git -C "$REPO" rev-parse HEAD)"
git clone -q --no-local "$REPO" "$FRESH/work/ptxforge"
git -C "$FRESH/work/ptxforge" checkout -q "$COMMIT"
[[ -n "$SHARED" ]] && cp -a "$SHARED" "$FRESH/work/shared"

for m in proc sys dev; do
  mount --rbind "/$m" "$FRESH/$m" && MOUNTS+=("$FRESH/$m")
done
cp /etc/resolv.conf "$FRESH/etc/resolv.conf"

run_in_root() { # label command
  local label="$1" cmd="$2" t0=$SECONDS rc=0
  echo "check-fresh: [$label] $cmd"
  chroot "$FRESH" /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM=dumb \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    bash -c "cd /work/ptxforge && $cmd" >"$FRESH.$label.log" 2>&1 || rc=$?
  tail -15 "$FRESH.$label.log"
  RESULTS+=("$label: exit $rc in $((SECONDS - t0)) s   ($cmd; log $FRESH.$label.log)")
  return $rc
}
RESULTS=()
status=0
run_in_root quickstart "scripts/quickstart.sh" || status=1
run_in_root test "scripts/test.sh" || status=1
echo
echo "check-fresh: commit ${COMMIT:0:12}, Debian $(cat "$FRESH/etc/debian_version") minbase"
printf 'check-fresh: %s\n' "${RESULTS[@]}"
exit $status
