#!/bin/bash
# Build glibc from Debian's source with --enable-cet: the guest's C
# libraries for real CET clients (ld.so and libc marked for IBT).
#
# Usage: glibc.sh VERSION [--runtime] [--cet-tests DIR]
#   VERSION      2.36 (Debian 12's, whose ld.so manages IBT through the
#                ARCH_CET_* calls) or 2.41 (Debian 13's, which never does)
#   --runtime    build only the libraries (make lib) and ld.so, and put
#                ld.so, libc.so.6 and libm.so.6 in root/lib64: enough to run programs
#                built against another glibc, in a third less time
#   --cet-tests  see the end of this script
#
#   build/dl/glibc/              the source packages (apt-get source)
#   build/glibc-VERSION/src      Debian's source, Debian's patches applied
#   build/glibc-VERSION/obj      configure --prefix=/usr --enable-cet
#   build/glibc-VERSION/root     make install DESTDIR=...: the C library as
#                                installed (/lib64, /usr/include, /usr/lib64)
#   build/glibc-VERSION/build.log
#
# Each step runs once and leaves a stamp; delete the folder to start over.
# A cold build takes about 10 minutes on 2 idle cores.
set -euo pipefail

ver=${1:?usage: glibc.sh 2.36|2.41 [--runtime] [--cet-tests DIR]}
shift
runtime=
if [ "${1:-}" = --runtime ]; then
	runtime=1
	shift
fi
top=$(cd "$(dirname "$0")/.." && pwd -P)
dir=$top/build/glibc-$ver
src=$dir/src
obj=$dir/obj
root=$dir/root
log=$dir/build.log
dl=$top/build/dl/glibc
jobs=${GLIBC_JOBS:-$(nproc)}

# Pinned source versions, with the suite to fall back on when the archive
# has moved on (it keeps only the newest revision of a suite).
case "$ver" in
2.36) pin=glibc=2.36-9+deb12u14 suite=bookworm ;;
2.41) pin=glibc=2.41-12+deb13u4 suite=trixie ;;
*) echo "glibc: unknown version $ver (2.36 or 2.41)" >&2; exit 2 ;;
esac

die() {
	echo "glibc $ver: $*" >&2
	[ -f "$log" ] && echo "glibc $ver: log: ${log#"$top"/}" >&2
	exit 1
}
step() { echo "glibc $ver: $1 (log: ${log#"$top"/})"; }

mkdir -p "$dir" "$dl"
: >>"$log"

dsc() { find "$dl" -maxdepth 1 -name "glibc_$ver-*.dsc" | sort -V | tail -1; }

if [ ! -f "$src/.unpacked" ]; then
	if [ -z "$(dsc)" ]; then
		step "downloading Debian's source package $pin"
		(cd "$dl" && { apt-get source -qq --download-only "$pin" ||
			apt-get source -qq --download-only "glibc/$suite"; }) >>"$log" 2>&1 ||
			die "apt-get source failed: run 'make deps' (adds the deb-src entries) and check the network"
	fi
	step "unpacking $(basename "$(dsc)") (Debian's patches applied)"
	rm -rf "$src"
	dpkg-source -q -x --no-copy "$(dsc)" "$src" >>"$log" 2>&1 ||
		die "dpkg-source failed"
	touch "$src/.unpacked"
fi

if [ ! -f "$obj/.configured" ]; then
	step "configuring (--prefix=/usr --enable-cet)"
	rm -rf "$obj"
	mkdir -p "$obj"
	# --disable-werror: Debian's gcc 12 warns where glibc 2.41's
	# authors' compilers did not.  Nothing here is for production.
	# --disable-mathvec: no program here uses libmvec, a thousand
	# objects of glibc 2.36's build.
	(cd "$obj" && "$src/configure" --prefix=/usr --enable-cet \
		--disable-werror --disable-nscd --disable-timezone-tools \
		--disable-profile --without-selinux --disable-mathvec) >>"$log" 2>&1 ||
		die "configure failed"
	touch "$obj/.configured"
fi

if [ -n "$runtime" ]; then
	if [ ! -f "$root/.runtime" ]; then
		step "building its libraries and ld.so with make -j$jobs lib (about 7 minutes cold)"
		make -C "$obj" -j"$jobs" lib >>"$log" 2>&1 || die "make lib failed"
		make -C "$src/elf" ..=../ subdir=elf objdir="$obj" -j"$jobs" \
			"$obj/elf/ld.so" >>"$log" 2>&1 || die "building ld.so failed"
		make -C "$src/math" ..=../ subdir=math objdir="$obj" -j"$jobs" \
			"$obj/math/libm.so" >>"$log" 2>&1 || die "building libm failed"
		rm -rf "$root"
		mkdir -p "$root/lib64"
		cp "$obj/elf/ld.so" "$root/lib64/ld-linux-x86-64.so.2"
		cp "$obj/libc.so" "$root/lib64/libc.so.6"
		cp "$obj/math/libm.so" "$root/lib64/libm.so.6"
		touch "$root/.runtime"
	fi
	exit 0
fi

if [ ! -f "$obj/.built" ]; then
	step "building with make -j$jobs (about 10 minutes cold)"
	make -C "$obj" -j"$jobs" >>"$log" 2>&1 || die "make failed"
	touch "$obj/.built"
fi

if [ ! -f "$root/.installed" ]; then
	step "installing into ${root#"$top"/}"
	rm -rf "$root"
	make -C "$obj" -j"$jobs" install DESTDIR="$root" >>"$log" 2>&1 ||
		die "make install failed"
	# Programs built against this root (gcc --sysroot) include the
	# kernel's headers from the build machine, as Debian's do.
	for d in linux asm-generic; do
		ln -sfn "/usr/include/$d" "$root/usr/include/$d"
	done
	ln -sfn /usr/include/x86_64-linux-gnu/asm "$root/usr/include/asm"
	touch "$root/.installed"
fi

# --cet-tests DIR: glibc's own CET tests, listed from glibc's Makefiles
# (scripts/glibc-cet-tests.mk), built, and copied to DIR with their modules
# and DIR/cet-tests, the table guest/glibc/glibc-cet.sh runs them from.
[ "${1:-}" = --cet-tests ] || exit 0
dest=${2:?--cet-tests needs a folder}
list=$obj/uibt-cet-tests.list
if [ ! -f "$list" ]; then
	step "listing its CET tests"
	for sub in elf setjmp posix stdlib; do
		make -s -C "$src/$sub" ..=../ subdir="$sub" objdir="$obj" \
			-f Makefile -f "$top/scripts/glibc-cet-tests.mk" \
			uibt-list-cet-tests 2>>"$log" | sed "s,|,|$sub/," ||
			die "listing the tests of $sub failed"
	done >"$list.tmp"
	grep -q '^test|' "$list.tmp" || die "no CET tests found in $ver's Makefiles"
	mv "$list.tmp" "$list"
fi
targets=()
while IFS='|' read -r kind path _; do
	case $kind in
	test) targets+=("$path") ;;
	module) targets+=("$path.so") ;;
	esac
done <"$list"
for t in "${targets[@]}"; do
	[ -f "$obj/$t" ] && continue
	sub=${t%%/*}
	step "building the test $t"
	make -C "$src/$sub" ..=../ subdir="$sub" objdir="$obj" \
		"$obj/$t" >>"$log" 2>&1 || die "building $t failed"
done
rm -rf "$dest"
mkdir -p "$dest"
for t in "${targets[@]}"; do
	cp "$obj/$t" "$dest/"
done
# glibc's rule for tst-cet-property-2 feeds it tst-cet-property-1's output.
while IFS='|' read -r kind path envs args; do
	[ "$kind" = test ] || continue
	name=${path#*/}
	input=
	[ "$name" = tst-cet-property-2 ] && input=tst-cet-property-1
	echo "$name|$envs|$args|$input"
done <"$list" >"$dest/cet-tests"
echo "glibc $ver: $(grep -c . "$dest/cet-tests") CET tests in ${dest#"$top"/}"
