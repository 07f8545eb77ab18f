#!/bin/bash
# Prove a series bisectable and clean: apply it one patch at a time onto
# "base" in a scratch worktree, build after each patch, and run the tree's
# checkpatch.pl on each patch (the kernel's with --strict).
# Usage: check-series.sh linux|qemu
#
# Builds go to build/check-NAME-out, incrementally from one patch to the next.
# For linux, "builds" means the kernel and its modules, and, once the series
# has them, cetcmd and the IBT selftests.
#
# CHECK_FROM=N builds only from patch N on (every patch is still applied and
# checkpatch'ed): to go on after fixing patch N, when an earlier run proved
# that patches 1 to N-1 build.
#
# A kernel whose sources (the tree but tools/cet, tools/testing and
# Documentation/ but its Kconfig, which its build does not read),
# configuration and compiler were
# already built without error, by this run or an earlier one, is not built
# again ("build same"): after a change to a selftest only, the patches
# whose kernel did not change cost a tools build.  The record is
# build/check-linux-out/.built-kernels; delete it to build every kernel.
set -euo pipefail

name=${1:?usage: check-series.sh linux|qemu}
top=$(cd "$(dirname "$0")/.." && pwd)
tree=$top/build/$name
work=$top/build/check-$name
out=$top/build/check-$name-out
log=$top/build/logs/check-$name.log

die() { echo "check-series: $*" >&2; exit 1; }

# Work on a copy: the series may be re-exported while this runs.
series_dir=$(mktemp -d)
trap 'rm -rf "$series_dir"' EXIT
cp -r "$top/patches/$name/." "$series_dir/"

[ -d "$tree/.git" ] || die "no tree build/$name: run 'make build' first"
mkdir -p "$(dirname "$log")" "$out"
: >"$log"
echo "check-series: $name; log: ${log#"$top"/}"

if [ ! -d "$work" ]; then
	git -C "$tree" worktree prune
	git -C "$tree" worktree add -q --detach "$work" base
fi
git -C "$work" am --abort >/dev/null 2>&1 || true
git -C "$work" reset -q --hard base

# The fragments of "make test" (not the debug kernel's).
fragments=()
for f in "$top"/config/*.config; do
	[ "$f" = "$top/config/debug.config" ] || fragments+=("$f")
done

build_tools() {
	if [ -f "$work/tools/cet/Makefile" ]; then
		mkdir -p "$out/tools-cet"
		make -C "$work/tools/cet" OUTPUT="$out/tools-cet/" || return
	fi
	if [ -f "$work/tools/testing/selftests/x86/ibt/Makefile" ]; then
		mkdir -p "$out/selftests-ibt"
		make -C "$work" O="$out" INSTALL_HDR_PATH="$out/hdr" \
			headers_install || return
		make -C "$work/tools/testing/selftests/x86/ibt" \
			OUTPUT="$out/selftests-ibt" \
			KHDR_INCLUDES="-isystem $out/hdr/include"
	fi
}

# What the kernel build of the worktree's HEAD reads: its sources, the
# fragments and kconfig.sh.  Of Documentation/, the build reads only
# Documentation/Kconfig.  (git ls-tree takes no exclude pathspecs.)
kernel_id() {
	local tree
	tree=$(git -C "$work" ls-tree -r HEAD) || return
	[ -n "$tree" ] || return
	{
		printf '%s\n' "$tree" |
			grep -v -e $'\ttools/cet/' -e $'\ttools/testing/' \
				-e $'\tDocumentation/[^K]' -e $'\tDocumentation/K[^c]'
		cat "${fragments[@]}" "$top/scripts/kconfig.sh"
		gcc --version
	} | sha1sum | cut -c1-40
}

built=$out/.built-kernels
same=''
build() {
	local id
	same=''
	case "$name" in
	linux)
		id=$(kernel_id) || return
		if grep -qxF "$id" "$built" 2>/dev/null; then
			same=1
			echo "check-series: kernel $id built before: not again"
		else
			KCONFIG_LENIENT=1 "$top/scripts/kconfig.sh" "$work" "$out" \
				"${fragments[@]}" &&
				make -C "$work" O="$out" -j"$(nproc)" bzImage modules &&
				echo "$id" >>"$built" || return
		fi
		build_tools
		;;
	qemu)
		if [ ! -f "$out/build.ninja" ]; then
			(cd "$out" && "$work/configure" --target-list=x86_64-softmmu \
				--without-default-features --enable-tcg \
				--disable-install-blobs --disable-docs --disable-tools)
		fi
		ninja -C "$out" qemu-system-x86_64
		;;
	esac
}

# spdxcheck.py, which checkpatch runs, needs Debian's python3 with ply and
# GitPython (scripts/deps.sh), not whatever python3 comes first in PATH.
checkpatch() {
	local PATH=/usr/bin:$PATH

	case "$name" in
	# FILE_PATH_CHANGES ("does MAINTAINERS need updating?") is left out: the
	# new files are under entries MAINTAINERS already has (X86 ARCHITECTURE).
	linux) (cd "$work" && ./scripts/checkpatch.pl --strict -q \
		--ignore FILE_PATH_CHANGES "$1") ;;
	qemu) "$work/scripts/checkpatch.pl" -q "$1" ;;
	esac
}

fail=0
n=0
while read -r p; do
	case "$p" in ''|\#*|0000-cover-letter.patch) continue ;; esac
	n=$((n + 1))
	patch=$series_dir/$p
	git -C "$work" -c user.name=uibt -c user.email=uibt@localhost \
		am -q "$patch" >>"$log" 2>&1 || die "$p does not apply; see $log"
	cp=ok
	checkpatch "$patch" >>"$log" 2>&1 || { cp=FAIL; fail=1; }
	start=$SECONDS
	bd=ok
	if [ "$n" -lt "${CHECK_FROM:-1}" ]; then
		bd=skip
	else
		build >>"$log" 2>&1 || { bd=FAIL; fail=1; }
		[ "$bd" = ok ] && [ -n "$same" ] && bd=same
	fi
	printf '%2d  checkpatch %-4s  build %-4s (%3d s)  %s\n' \
		"$n" "$cp" "$bd" "$((SECONDS - start))" "$p"
done <"$series_dir/series"

[ "$n" -gt 0 ] || die "patches/$name/series is empty"

# The whole series must also build with each CET user feature left out.
if [ "$name" = linux ]; then
	for opt in X86_USER_IBT X86_USER_SHADOW_STACK; do
		frag=$series_dir/no-$opt.config
		echo "CONFIG_$opt=n" >"$frag"
		start=$SECONDS
		bd=ok
		{
			KCONFIG_LENIENT=1 "$top/scripts/kconfig.sh" "$work" \
				"$out-no-$opt" "${fragments[@]}" "$frag" &&
				grep -qx "# CONFIG_$opt is not set" "$out-no-$opt/.config" &&
				make -C "$work" O="$out-no-$opt" -j"$(nproc)" bzImage modules
		} >>"$log" 2>&1 || { bd=FAIL; fail=1; }
		printf '    all patches, CONFIG_%s=n: build %-4s (%3d s)\n' \
			"$opt" "$bd" "$((SECONDS - start))"
	done
fi
if [ "$fail" -ne 0 ]; then
	die "problems above; details in $log"
fi
if [ "${CHECK_FROM:-1}" -gt 1 ]; then
	echo "check-series: $n patches apply and are checkpatch-clean; patches $CHECK_FROM to $n build (the earlier ones were not built this run)"
else
	echo "check-series: $n patches: each applies, builds and is checkpatch-clean"
fi
