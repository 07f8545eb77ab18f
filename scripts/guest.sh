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
# Whether an ELF file carries the x86 IBT property
is_marked() { readelf -n "$1" | grep -q 'x86 feature: IBT'; }
ibt_marked() { is_marked "$1" || die "$1 lacks the IBT property"; }
# pack DIR FILE: DIR as a reproducible gzipped newc cpio archive
pack() {
	(cd "$1" && find . | LC_ALL=C sort |
		cpio -o -H newc --owner=0:0 --quiet --reproducible) | gzip -9n >"$2"
}

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
# The guest's own small programs: static, nolibc, -fcf-protection=branch
# (all of their code has landing pads, and they carry the IBT property).
nolibc_cc=(gcc -O2 -static -nostdlib -ffreestanding
	-fno-asynchronous-unwind-tables -fcf-protection=branch
	-I "$ksrc/tools/include/nolibc" -include nolibc.h)
# xstate.sh's oracle: the compacted XSAVE layout from CPUID.
run "${nolibc_cc[@]}" -o "$out/xsave_layout" "$top/guest/boot/xsave_layout.c" -lgcc
install -m 755 "$out/xsave_layout" "$root.new/tests/boot/"

# The bench workload.
mkdir -p "$root.new/tests/bench"
run "${nolibc_cc[@]}" -fno-jump-tables -o "$out/bench" "$top/guest/bench/bench.c" -lgcc
ibt_marked "$out/bench"
install -m 755 "$out/bench" "$top/guest/bench/run" "$root.new/tests/bench/"

# cetcmd and the IBT selftests, once the series carries them.  cetcmd and
# cettrace are linked statically against glibc 2.36 built with
# --enable-cet (below), so that they are IBT-clean: ibt_cetcmd runs cetcmd
# under CET_EXEC_ALWAYS_ON, where every program gets IBT.
g236=$top/build/glibc-2.36/root
[ -f "$g236/.installed" ] || die "glibc is not built: run 'make glibc'"
cet_cc="gcc --sysroot=$g236 -B$g236/usr/lib64/ -L$g236/usr/lib64"
# (Their rules do not depend on the compiler: build them again each time.)
rm -f "$out/cet/cetcmd" "$out/cet/cettrace" "$out/ibt/cetcmd" "$out/ibt/cettrace"
if [ -f "$ksrc/tools/cet/Makefile" ]; then
	mkdir -p "$out/cet"
	run make -C "$ksrc/tools/cet" OUTPUT="$out/cet/" CC="$cet_cc"
	ibt_marked "$out/cet/cetcmd"
	install -m 755 "$out/cet/cetcmd" "$root.new/tests/bin/"
fi
st=$ksrc/tools/testing/selftests/x86/ibt
if [ -f "$st/Makefile" ]; then
	mkdir -p "$out/ibt" "$root.new/tests/ibt"
	# The selftests see the series' uapi headers, not the build machine's.
	run make -C "$ksrc" O="$kout" INSTALL_HDR_PATH="$out/hdr" headers_install
	run make -C "$st" OUTPUT="$out/ibt" CET_CC="$cet_cc" \
		KHDR_INCLUDES="-isystem $out/hdr/include"
	ibt_marked "$out/ibt/cetcmd"
	for f in "$out"/ibt/*; do
		[ -f "$f" ] && [ -x "$f" ] && install -m 755 "$f" "$root.new/tests/ibt/"
	done
fi

# The guest's C library: glibc 2.36 built with --enable-cet (scripts/glibc.sh),
# in /lib64, where its programs' PT_INTERP points; and the run-time of
# glibc 2.41 (Debian 13's, which never manages IBT) in /opt/glibc-2.41/lib64.
g241=$top/build/glibc-2.41/root
if [ ! -f "$g236/.installed" ] || [ ! -f "$g241/.runtime" ]; then
	die "glibc is not built: run 'make glibc'"
fi
mkdir -p "$root.new/lib64" "$root.new/opt/glibc-2.41/lib64"
cp -L "$g236"/lib64/{ld-linux-x86-64.so.2,libc.so.6,libm.so.6} \
	"$root.new/lib64/"
cp "$g241"/lib64/{ld-linux-x86-64.so.2,libc.so.6,libm.so.6} \
	"$root.new/opt/glibc-2.41/lib64/"
for f in "$root.new/lib64/ld-linux-x86-64.so.2" \
	"$root.new/opt/glibc-2.41/lib64/ld-linux-x86-64.so.2"; do
	is_marked "$f" ||
		die "$f lacks the IBT property: was glibc configured with --enable-cet?"
done

# glibc 2.36's own CET tests (guest/glibc).
mkdir -p "$root.new/tests/glibc"
cp "$top"/build/glibc-2.36/cet-tests/* "$root.new/tests/glibc/"
install -m 755 "$top/guest/glibc/glibc-cet.sh" "$root.new/tests/glibc/"
install -m 644 "$top/guest/glibc/expected" "$root.new/tests/glibc/"
# glibc links its tests to their modules by the build folder's absolute path
# (DT_NEEDED), and its own cross-testing runs them where that path exists:
# so does the guest, pointing at the copies.  guest/init makes the link
# again where its tmpfs hides it (a build folder under /tmp).
elfdir=$(realpath "$top/build/glibc-2.36/obj")/elf
mkdir -p "$root.new$(dirname "$elfdir")"
ln -s /tests/glibc "$root.new$elfdir"
printf '%s\n' "$elfdir" >"$root.new/etc/uibt/glibc-elfdir"

# Real clients (guest/clients): a marked program that loads plugins and
# calls an unmarked DT_NEEDED library, linked against glibc 2.36 (its
# marked start files) and run by the 2.36 or the 2.41 dynamic linker.
c=$top/guest/clients
co=$out/clients
mkdir -p "$co" "$root.new/tests/clients"
cc236=(gcc --sysroot="$g236" -B"$g236/usr/lib64/" -L"$g236/usr/lib64" -O2 -Wall
	-Wextra -I "$c")
at241=("-Wl,--dynamic-linker=/opt/glibc-2.41/lib64/ld-linux-x86-64.so.2"
	"-Wl,-rpath,/opt/glibc-2.41/lib64")
run "${cc236[@]}" -fcf-protection=branch -fPIC -shared -o "$co/plugin-marked.so" "$c/plugin.c"
run "${cc236[@]}" -fcf-protection=none -fPIC -shared -o "$co/plugin-unmarked.so" "$c/plugin.c"
run "${cc236[@]}" -fcf-protection=none -fPIC -shared -o "$co/libneeded.so" "$c/needed.c"
run "${cc236[@]}" -fcf-protection=branch -o "$co/host-236" "$c/host.c"
run "${cc236[@]}" -fcf-protection=branch -static -o "$co/host-236-static" "$c/host.c"
run "${cc236[@]}" -fcf-protection=branch -DWITH_NEEDED -o "$co/host-236-needed" \
	"$c/host.c" -L"$co" -lneeded -Wl,-rpath,/tests/clients
run "${cc236[@]}" -fcf-protection=branch "${at241[@]}" -o "$co/host-241" "$c/host.c"
run "${cc236[@]}" -fcf-protection=branch -DWITH_NEEDED "${at241[@]}" \
	-o "$co/host-241-needed" "$c/host.c" -L"$co" -lneeded \
	-Wl,-rpath,/tests/clients
for f in host-236 host-236-static host-236-needed host-241 host-241-needed \
	plugin-marked.so; do
	ibt_marked "$co/$f"
done
for f in plugin-unmarked.so libneeded.so; do
	! is_marked "$co/$f" || die "$co/$f has the IBT property; it must not"
done
install -m 755 "$co"/host-* "$co"/*.so "$c/clients.sh" "$root.new/tests/clients/"

# Lua from Debian's source, and what its workload prints on this machine
# (no IBT here; lua-236 runs with the build machine's glibc 2.36).
run "$top/scripts/lua.sh" "$co/lua"
mkdir -p "$root.new/tests/clients/lua"
"$co/lua/lua-236" "$c/lua/work.lua" >"$co/lua/expected" 2>>"$log" ||
	die "lua-236 $c/lua/work.lua failed on the build machine"
grep -q '^work ok [0-9]' "$co/lua/expected" ||
	die "lua-236 work.lua printed $(cat "$co/lua/expected")"
install -m 755 "$co"/lua/lua-236 "$co"/lua/lua-241 "$root.new/tests/clients/"
install -m 644 "$co"/lua/mod-*.so "$co/lua/expected" "$c/lua/work.lua" "$c/lua/load.lua" \
	"$root.new/tests/clients/lua/"

# Every listed program must be there.
while read -r prog _; do
	case "$prog" in ''|\#*|*:*) continue ;; esac
	[ -x "$root.new/tests/$prog" ] ||
		die "guest/tests lists $prog, but the build produced no tests/$prog"
done <"$top/guest/tests"

rm -rf "$root"
mv "$root.new" "$root"

# Repack only when the content changed, so that nothing downstream rebuilds.
sum=$(cd "$root" && {
	find . -type f | LC_ALL=C sort | xargs -d '\n' sha1sum
	find . -type l -printf '%p -> %l\n' | LC_ALL=C sort
} | sha1sum | cut -d' ' -f1)
if [ "$(cat "$out/initramfs.sum" 2>/dev/null)" != "$sum" ] ||
	[ ! -f "$out/initramfs.cpio.gz" ]; then
	pack "$root" "$out/initramfs.cpio.gz.tmp"
	mv "$out/initramfs.cpio.gz.tmp" "$out/initramfs.cpio.gz"
	echo "$sum" >"$out/initramfs.sum"
	echo "guest: packed $(find "$root" -type f | wc -l) files into $out/initramfs.cpio.gz"
fi

# The initramfs of "uibt exec" (guest/exec, harness/exec.py): busybox,
# cettrace and an init that runs one program of the host's.  Small, so that
# it boots quickly; the program and its files come over 9p.
if [ -x "$out/cet/cettrace" ]; then
	ex=$out/exec-root
	rm -rf "$ex"
	mkdir -p "$ex"/{bin,dev,proc,uibt,host}
	cp "$busybox" "$ex/bin/busybox"
	install -m 755 "$out/cet/cettrace" "$ex/bin/"
	run gcc -static -O2 -Wall -Wextra -o "$ex/bin/binds" "$top/guest/exec/binds.c"
	install -m 755 "$top/guest/exec/init" "$ex/init"
	pack "$ex" "$out/exec.cpio.gz.tmp"
	if cmp -s "$out/exec.cpio.gz.tmp" "$out/exec.cpio.gz"; then
		rm "$out/exec.cpio.gz.tmp"
	else
		mv "$out/exec.cpio.gz.tmp" "$out/exec.cpio.gz"
		echo "guest: packed $out/exec.cpio.gz (uibt exec)"
	fi
fi
