#!/bin/bash
# Real projects' own test suites under "uibt exec --report" (issue 13's
# acceptance; not part of make test): libffi (closures and trampolines) and
# pcre2 (its JIT), both from Debian 12's source, built with
# -fcf-protection=branch against the CET glibc ("./uibt cc").
#
# Usage: acceptance.sh [libffi|libffi-nocet|pcre2]...   (default: all)
#
#   build/dl/acceptance/          the source packages (apt-get source)
#   build/acceptance/P/src        Debian's source, Debian's patches applied
#   build/acceptance/P/obj        the build
#   build/acceptance/libffi/run   the suite's programs and run-all.sh: the
#                                 guest's working directory (pcre2's is obj)
#   .../run-all.sh, results, out/ what the guest runs; one line per test,
#                                 NAME STATUS; each test's output
#   build/acceptance/P/report.txt what uibt exec printed: every missing
#                                 ENDBR, with its source line
#   build/acceptance/P/summary.txt the verdict
#
# libffi's suite is DejaGnu's; here its programs are compiled by this
# script (each test at -O0 and -O2, bhaible's two programs as their own
# Makefile builds them) and run in one boot.  A test passes when it exits 0
# and, where it has dg-output lines, its output matches them
# (harness/dg_output.py).  pcre2's suite is its own: pcre2_jit_test and
# RunTest.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd -P)
cc="$top/uibt cc"
canary=$top/build/exec-tests/missing
dl=$top/build/dl/acceptance
jobs=$(nproc)

die() { echo "acceptance: $*" >&2; exit 1; }
step() { echo "acceptance: $*"; }

# unpack PKG: Debian 12's source of PKG in build/acceptance/PKG/src
unpack() {
	local pkg=$1 dir=$top/build/acceptance/$1 dsc
	[ -f "$dir/src/.unpacked" ] && return
	mkdir -p "$dl" "$dir"
	dsc=$(find "$dl" -maxdepth 1 -name "${pkg}_*.dsc" | sort -V | tail -1)
	if [ -z "$dsc" ]; then
		step "$pkg: apt-get source $pkg/bookworm"
		(cd "$dl" && apt-get source -qq --download-only "$pkg/bookworm") >"$dir.log" 2>&1 ||
			die "apt-get source $pkg failed: run 'make deps' (adds the deb-src entries); see $dir.log"
		dsc=$(find "$dl" -maxdepth 1 -name "${pkg}_*.dsc" | sort -V | tail -1)
	fi
	rm -rf "$dir/src"
	dpkg-source -x "$dsc" "$dir/src" >>"$dir.log" 2>&1 || die "dpkg-source -x $dsc failed; see $dir.log"
	touch "$dir/src/.unpacked"
}

# configure_make PKG CONFIGURE-ARGS...: an out-of-tree build, with ./uibt cc
configure_make() {
	local pkg=$1 dir=$top/build/acceptance/$1
	shift
	mkdir -p "$dir/obj"
	if [ ! -f "$dir/obj/.configured" ]; then
		step "$pkg: configure (log: build/acceptance/$pkg/build.log)"
		(cd "$dir/obj" && CC="$cc" CFLAGS="${LIB_CFLAGS:-"-O2 -g"}" "$dir/src/configure" "$@") \
			>"$dir/build.log" 2>&1 || die "$pkg: configure failed; see $dir/build.log"
		touch "$dir/obj/.configured"
	fi
	step "$pkg: make (log: build/acceptance/$pkg/build.log)"
	make -C "$dir/obj" -j"$jobs" >>"$dir/build.log" 2>&1 || die "$pkg: make failed; see $dir/build.log"
}

# run_suite PKG DIR N [OPTION...]: DIR/run-all.sh in the guest under
# --report (and the uibt exec options given), in DIR (shared read-write:
# the suite writes its files there); it must leave N lines in DIR/results,
# one per program it ran.
run_suite() {
	local pkg=$1 dir=$top/build/acceptance/$1 run=$2 want=$3 rc=0 got
	shift 3
	step "$pkg: running the suite under ./uibt exec --report (output: ${run#"$top"/}/out)"
	rm -f "$run/results"
	# The canary, last: uibt exec's own test program, whose four missing
	# ENDBRs are reported only if IBT was enforced in this boot.
	printf '%q >/dev/null 2>&1 || :\n' "$canary" >>"$run/run-all.sh"
	(cd "$run" && "$top/uibt" exec --report --timeout 3600 "$@" -- sh ./run-all.sh) \
		</dev/null >"$dir/stdout.txt" 2>"$dir/report.txt" || rc=$?
	grep '^uibt exec:' "$dir/report.txt" || true
	[ "$rc" = 0 ] || die "$pkg: run-all.sh exited with $rc; see ${dir#"$top"/}/report.txt"
	got=$(wc -l <"$run/results" 2>/dev/null || echo 0)
	[ "$got" = "$want" ] || die "$pkg: $got results of $want programs; see ${dir#"$top"/}/report.txt"
	grep -q "missing ENDBR: $canary:asm_nolanding+0x0 " "$dir/report.txt" ||
		die "$pkg: the canary's missing ENDBRs were not found: IBT was not enforced"
	echo "acceptance: $pkg: $(grep -c '^uibt exec: missing ENDBR: ' "$dir/report.txt") missing" \
		"ENDBR targets, of which the canary's 4 (build/exec-tests/missing)"
}

# Every ELF file given has the IBT property: else glibc turns IBT off for
# the process, and its run would check nothing.
all_marked() {
	local f n=0
	for f; do
		readelf -n "$f" | grep -q 'x86 feature: IBT' || { echo "not IBT-marked: $f"; n=$((n + 1)); }
	done
	[ "$n" = 0 ] || die "$n programs or libraries lack the IBT property"
}

libffi() {
	local dir=$top/build/acceptance/libffi src obj run t name o
	src=$dir/src obj=$dir/obj run=$dir/run
	unpack libffi
	configure_make libffi --disable-docs --disable-multi-os-directory
	rm -rf "$run" "$dir/compile-failures"
	mkdir -p "$run/bin" "$run/out"
	step "libffi: compiling the suite's programs (log: build/acceptance/libffi/tests.log)"
	: >"$dir/tests.log"
	local lib=(-I"$obj/include" -I"$obj" -I"$src/include" -L"$obj/.libs" "-Wl,-rpath,$obj/.libs" -lffi -lm)
	for t in "$src"/testsuite/libffi.{call,closures,complex,go}/*.c; do
		grep -q 'dg-do run' "$t" || continue
		name=$(basename "$(dirname "$t")").$(basename "$t" .c)
		name=${name#libffi.}
		for o in -O0 -O2; do
			$cc "$o" -w -I"$(dirname "$t")" -o "$run/bin/$name$o" "$t" "${lib[@]}" \
				>>"$dir/tests.log" 2>&1 ||
				echo "$name$o: does not compile" >>"$dir/compile-failures"
		done
	done
	for t in call callback; do
		$cc -O2 -w -I"$src/testsuite/libffi.bhaible" -o "$run/bin/bhaible.test-$t" \
			"$src/testsuite/libffi.bhaible/test-$t.c" "${lib[@]}" >>"$dir/tests.log" 2>&1 ||
			die "bhaible test-$t does not compile; see $dir/tests.log"
	done
	cat >"$run/run-all.sh" <<-'EOF'
		# Every program of bin/, its output in out/, its status in results.
		for t in bin/*; do
			n=${t#bin/}
			"./$t" >"out/$n" 2>&1
			echo "$n $?" >>results
		done
	EOF
	all_marked "$obj/.libs/libffi.so" "$run"/bin/*
	run_suite libffi "$run" "$(find "$run/bin" -type f | wc -l)"
	python3 "$top/harness/dg_output.py" "$src/testsuite" "$run" | tee "$dir/summary.txt" || true
	if [ -f "$dir/compile-failures" ]; then
		cat "$dir/compile-failures"
		echo "libffi: $(wc -l <"$dir/compile-failures") programs did not compile"
	fi
}

# The negative control: the same libffi built without CET
# (-fcf-protection=none: no ENDBR in unix64.S's jump table and trampolines
# nor in its C, a PLT without ENDBR, no IBT property: as libffi before 3.3
# or built without CET), its closure tests (marked; the call tests loop
# over ffi_call, a million faults for promotion.c alone) run with IBT
# kept on by the C library
# (glibc.cpu.x86_ibt=on: an unmarked libffi.so would turn it off).  The
# report must name what lacks its ENDBR, or the tool would not find what
# it is for.
libffi-nocet() {
	local dir=$top/build/acceptance/libffi-nocet src obj run t name n
	src=$top/build/acceptance/libffi/src obj=$dir/obj run=$dir/run
	unpack libffi
	mkdir -p "$dir"
	ln -sfn "$src" "$dir/src"
	LIB_CFLAGS="-O2 -g -fcf-protection=none" configure_make libffi-nocet --disable-docs \
		--disable-multi-os-directory
	rm -rf "$run"
	mkdir -p "$run/bin" "$run/out"
	step "libffi-nocet: compiling the closure tests"
	local lib=(-I"$obj/include" -I"$obj" -I"$src/include" -L"$obj/.libs" "-Wl,-rpath,$obj/.libs" -lffi -lm)
	for t in "$src"/testsuite/libffi.closures/*.c; do
		grep -q 'dg-do run' "$t" || continue
		name=$(basename "$(dirname "$t")").$(basename "$t" .c)
		$cc -O2 -w -I"$(dirname "$t")" -o "$run/bin/${name#libffi.}" "$t" "${lib[@]}" \
			>>"$dir/tests.log" 2>&1 || true
	done
	cat >"$run/run-all.sh" <<-'EOF'
		for t in bin/*; do
			GLIBC_TUNABLES=glibc.cpu.x86_ibt=on "./$t" >"out/${t#bin/}" 2>&1
			echo "${t#bin/} $?" >>results
		done
	EOF
	run_suite libffi-nocet "$run" "$(find "$run/bin" -type f | wc -l)"
	n=$(grep -c "^uibt exec: missing ENDBR: $obj/.libs/libffi.so" "$dir/report.txt" || true)
	[ "$n" -gt 0 ] || die "libffi-nocet: no missing ENDBR found in libffi.so"
	echo "libffi-nocet: $n missing ENDBR targets in libffi.so" | tee "$dir/summary.txt"
}

pcre2() {
	local dir=$top/build/acceptance/pcre2 run
	run=$dir/obj
	unpack pcre2
	configure_make pcre2 --enable-jit --disable-shared --enable-pcre2-16 --enable-pcre2-32
	rm -rf "$run/out"
	mkdir -p "$run/out"
	# RunTest writes its scratch files in the working directory: the build's.
	cat >"$run/run-all.sh" <<-EOF
		# pcre2's own checks: the JIT's test program, then RunTest (pcre2test
		# on every test file, each with and without the JIT).
		./pcre2_jit_test >out/pcre2_jit_test 2>&1
		echo "pcre2_jit_test \$?" >>results
		srcdir=$(printf %q "$dir/src") sh $(printf %q "$dir/src/RunTest") >out/RunTest 2>&1
		echo "RunTest \$?" >>results
	EOF
	all_marked "$run/pcre2_jit_test" "$run/pcre2test"
	run_suite pcre2 "$run" 2
	awk '{ n++; if ($2 == 0) p++; else print "FAIL " $0 } END { printf "pcre2: %d of %d passed\n", p, n }' \
		"$run/results" | tee "$dir/summary.txt"
}

[ $# -gt 0 ] || set -- libffi libffi-nocet pcre2
for p; do
	case "$p" in
	libffi | libffi-nocet | pcre2) "$p" ;;
	*) die "unknown project $p (libffi, libffi-nocet or pcre2)" ;;
	esac
done
