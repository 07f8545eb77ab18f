#!/bin/bash
# Build build/qemu (Debian's qemu 7.2 with patches/qemu applied, see tree.sh)
# into build/qemu-build: a TCG-only x86_64 system emulator.
#
#   result: build/qemu-build/qemu-system-x86_64
#   run it: qemu-system-x86_64 -L /usr/share/seabios -L /usr/share/qemu -nic none ...
#
# Configures once, then builds incrementally with ninja.  The machine is
# shared: the build runs niced with at most two jobs (override with JOBS=N).
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
src=$top/build/qemu
out=$top/build/qemu-build
log=$out/build.log
jobs=${JOBS:-2}

die() { echo "qemu-build: $*" >&2; exit 1; }

[ -x "$src/configure" ] || die "$src is missing: run scripts/tree.sh qemu first"
mkdir -p "$out"
echo "qemu-build: log in $log"
: >"$log"

# virtfs (9p) is for "uibt exec", which shares the host's files with the
# guest; it needs libcap-ng and the C library's xattr calls.  TCG plugins are
# for "make bench", which counts the instructions the guest kernel runs.
args=(--target-list=x86_64-softmmu --without-default-features --enable-tcg
	--enable-attr --enable-cap-ng --enable-virtfs --enable-plugins
	--disable-install-blobs --disable-docs --disable-tools --disable-werror)
# Configure again when the arguments change, not only on a first build.
if [ ! -f "$out/build.ninja" ] ||
	[ "$(cat "$out/configure-args" 2>/dev/null)" != "${args[*]}" ]; then
	echo "qemu-build: configuring"
	rm -f "$out/configure-args"
	(cd "$out" && nice -n 10 "$src/configure" "${args[@]}") >>"$log" 2>&1 ||
		{ tail -n 30 "$log" >&2; die "configure failed, see $log"; }
	echo "${args[*]}" >"$out/configure-args"
fi

echo "qemu-build: building"
if ! nice -n 10 ninja -C "$out" -j "$jobs" qemu-system-x86_64 >>"$log" 2>&1; then
	grep -E 'error|FAILED' "$log" | head -n 30 >&2 || true
	die "build failed, see $log"
fi
[ -x "$out/qemu-system-x86_64" ] || die "no $out/qemu-system-x86_64 after the build"
echo "qemu-build: $out/qemu-system-x86_64"
