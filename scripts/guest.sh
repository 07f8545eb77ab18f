#!/bin/bash
# Build the guest programs and pack them with an init into an initramfs.
# Usage: guest.sh KSRC KOUT OUT
#
#   OUT/root/                   the initramfs tree
#   OUT/initramfs.cpio.gz       rewritten only when the tree's content changes
#
# Programs: our kernel-IBT module and script (guest/kibt), and from the
# patched tree, when the series has them, cetcmd (tools/cet) and the IBT
# selftests (tools/testing/selftests/x86/ibt).  Every program that
# guest/tests lists must exist, or the build fails.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
ksrc=$(realpath "$1")
kout=$(realpath "$2")
out=$(realpath -m "$3")
log=$out/build.log
root=$out/root

die() { echo "guest: $*" >&2; exit 1; }
run() { "$@" >>"$log" 2>&1 || die "'$*' failed; see $log"; }

mkdir -p "$out"
: >"$log"

busybox=$(command -v busybox || true)
[ -n "$busybox" ] && file -L "$busybox" 2>/dev/null | grep -q 'statically linked' ||
	busybox=/bin/busybox
[ -x "$busybox" ] || die "no static busybox: run 'make deps' (installs busybox-static)"

rm -rf "$root.new"
mkdir -p "$root.new"/{bin,dev,proc,sys,tmp,etc/uibt,tests/bin,tests/kibt}
cp "$busybox" "$root.new/bin/busybox"
install -m 755 "$top/guest/init" "$root.new/init"
install -m 755 "$top/guest/run-tests" "$top/guest/demo" "$root.new/etc/uibt/"
install -m 644 "$top/guest/tests" "$root.new/etc/uibt/tests"

# Kernel-IBT test module, built out of tree against the test kernel.
mkdir -p "$out/kibt"
cp -u "$top"/guest/kibt/{Kbuild,kibt_test.c,kibt_noendbr.S} "$out/kibt/"
run make -C "$kout" M="$out/kibt" modules
install -m 644 "$out/kibt/kibt.ko" "$root.new/tests/kibt/"
install -m 755 "$top/guest/kibt/kibt.sh" "$root.new/tests/kibt/"
mkdir -p "$root.new/tests/boot"
install -m 755 "$top/guest/boot/xstate.sh" "$top/guest/boot/la57.sh" "$root.new/tests/boot/"

# The bench workload: nolibc and -fcf-protection=branch, so that all of its
# code has landing pads and the binary carries the IBT property.
mkdir -p "$root.new/tests/bench"
run gcc -O2 -static -nostdlib -ffreestanding -fno-asynchronous-unwind-tables \
	-fcf-protection=branch -fno-jump-tables -I "$ksrc/tools/include/nolibc" \
	-include nolibc.h -o "$out/bench" "$top/guest/bench/bench.c" -lgcc
readelf -n "$out/bench" | grep -q 'x86 feature: IBT' ||
	die "$out/bench lacks the IBT property"
install -m 755 "$out/bench" "$top/guest/bench/run" "$root.new/tests/bench/"

# cetcmd and the IBT selftests, once the series carries them.
if [ -f "$ksrc/tools/cet/Makefile" ]; then
	mkdir -p "$out/cet"
	run make -C "$ksrc/tools/cet" OUTPUT="$out/cet/"
	install -m 755 "$out/cet/cetcmd" "$root.new/tests/bin/"
fi
st=$ksrc/tools/testing/selftests/x86/ibt
if [ -f "$st/Makefile" ]; then
	mkdir -p "$out/ibt" "$root.new/tests/ibt"
	run make -C "$st" OUTPUT="$out/ibt"
	for f in "$out"/ibt/*; do
		[ -f "$f" ] && [ -x "$f" ] && install -m 755 "$f" "$root.new/tests/ibt/"
	done
fi

# Every listed program must be there.
while read -r prog _; do
	case "$prog" in ''|\#*|*:*) continue ;; esac
	[ -x "$root.new/tests/$prog" ] ||
		die "guest/tests lists $prog, but the build produced no tests/$prog"
done <"$top/guest/tests"

rm -rf "$root"
mv "$root.new" "$root"

# Repack only when the content changed, so that nothing downstream rebuilds.
sum=$(cd "$root" && find . -type f -o -type l | LC_ALL=C sort |
	xargs -d '\n' sha1sum | sha1sum | cut -d' ' -f1)
if [ "$(cat "$out/initramfs.sum" 2>/dev/null)" != "$sum" ] ||
	[ ! -f "$out/initramfs.cpio.gz" ]; then
	(cd "$root" && find . | LC_ALL=C sort |
		cpio -o -H newc --owner=0:0 --quiet --reproducible) |
		gzip -9n >"$out/initramfs.cpio.gz.tmp"
	mv "$out/initramfs.cpio.gz.tmp" "$out/initramfs.cpio.gz"
	echo "$sum" >"$out/initramfs.sum"
	echo "guest: packed $(find "$root" -type f | wc -l) files into $out/initramfs.cpio.gz"
fi
