#!/bin/bash
# Real projects' own test suites under "uibt exec --report" (issue 13's
# acceptance; not part of make test): libffi (closures and trampolines) and
# pcre2 (its JIT), both from Debian 12's source, built with
# -fcf-protection=branch against the CET glibc ("./uibt cc").
#
# Usage: acceptance.sh [libffi|libffi-nocet|pcre2|busybox|busybox-nocet]...
#        (default: all; busybox: functions busybox_build, busybox below)
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

# busybox_build NAME EXTRA-CFLAGS: busybox 1.35 (Debian 12's source and
# patches) in build/acceptance/NAME/obj, make defconfig (CONFIG_STATIC=n:
# dynamically linked), ./uibt cc, unstripped (SKIP_STRIP=y: the report
# names functions).  The sysroot (build/glibc-2.36/root) takes only
# linux/, asm/ and asm-generic/ from this machine's kernel headers; the MTD
# applets (nandwrite, nanddump, flashcp, flash_eraseall, flash_lock,
# flash_unlock, ubi*) also include <mtd/...>, found with -idirafter in this
# machine's /usr/include/mtd (linux-libc-dev), as Debian's build finds it.
busybox_build() {
	local name=$1 cflags=$2 dir=$top/build/acceptance/$1 src=$top/build/acceptance/busybox/src obj
	obj=$dir/obj
	unpack busybox
	mkdir -p "$obj" "$dir/include"
	ln -sfn /usr/include/mtd "$dir/include/mtd"
	if [ ! -f "$obj/.configured" ]; then
		step "$name: make defconfig (log: build/acceptance/$name/build.log)"
		make -C "$src" O="$obj" defconfig >"$dir/build.log" 2>&1 ||
			die "$name: make defconfig failed; see $dir/build.log"
		sed -i "s|^CONFIG_EXTRA_CFLAGS=.*|CONFIG_EXTRA_CFLAGS=\"$cflags -idirafter $dir/include\"|" \
			"$obj/.config"
		make -C "$obj" oldconfig </dev/null >>"$dir/build.log" 2>&1 ||
			die "$name: make oldconfig failed; see $dir/build.log"
		grep -qx '# CONFIG_STATIC is not set' "$obj/.config" || die "$name: CONFIG_STATIC is set"
		touch "$obj/.configured"
	fi
	step "$name: make (log: build/acceptance/$name/build.log)"
	make -C "$obj" CC="$cc" SKIP_STRIP=y -j"$jobs" >>"$dir/build.log" 2>&1 ||
		die "$name: make failed; see $dir/build.log"
	readelf -lW "$obj/busybox" | grep -q 'interpreter: /lib64/ld-linux-x86-64.so.2' ||
		die "$name: busybox is not dynamically linked"
}

# busybox's testsuite failures that are not IBT's, each with its reason,
# checked one by one: in the guest, each fails where the reason says
# (mkfifo and mknod on the 9p share: ENXIO; "mount -o loop": no loop
# device; hostname -f has no domain), cettrace reports no missing ENDBR in
# the run but the canary's, and the same binary passes the diff, makedevs
# and hostname tests on this machine, outside the guest.
busybox_known_failures='
mount -o remount,mand	the test kernel has no loop device: its "mount -o loop" fails first (and the mandatory locking it then asks for is gone since 5.15)
mount RO loop	the test kernel has no loop device
diff of dir and fifo	a FIFO in the 9p-shared working directory: mkfifo fails with ENXIO (guest only)
diff of file and fifo	a FIFO in the 9p-shared working directory (guest only)
diff -rN does not read non-regular files	a FIFO in the 9p-shared working directory (guest only)
hostname-d-works	the guest has no network and no DNS domain (guest only)
makedevs -d ../makedevs.device_table.txt .	device nodes in the 9p-shared working directory (guest only)
'

# busybox, built with -fcf-protection=branch, in one boot: applets.sh, run
# by busybox's own sh with its applets first in PATH (shell functions,
# pipes, traps, getopts; hush; sort, awk, sed, grep, find, xargs,
# tar/gzip/bzip2/lzop/cpio round trips, checksums, cryptpw, ps, kill,
# timeout; each output against an answer checked with GNU tools or
# Python), which also reads x86_Thread_features in /proc/self/status
# (IBT on in busybox's processes); then busybox's own testsuite
# (testsuite/runtest), as Debian's build runs it (debian/rules: its
# environment, without mdev.tests).  No missing ENDBR but the canary's.
busybox() {
	local dir=$top/build/acceptance/busybox obj run a f n
	obj=$dir/obj run=$dir/run
	busybox_build busybox -g
	all_marked "$obj/busybox"
	rm -rf "$run"
	mkdir -p "$run/bin" "$run/out"
	cp "$obj/busybox" "$obj/.config" "$run/"
	for a in $("$run/busybox" --list); do
		ln -s ../busybox "$run/bin/$a"
	done
	cp -a "$dir/src/testsuite" "$run/"
	rm -f "$run/testsuite/mdev.tests"
	cat >"$run/applets.sh" <<-'EOF'
		# Run by busybox's sh, busybox's applets first in PATH: each check runs
		# a command (most often a shell function) whose output must be the
		# answer given; one line "NAME STATUS" per check in results.
		check() {
		name=$1 want=$2
		shift 2
		got=$("$@" 2>&1)
		rc=$?
		if [ "$rc" = 0 ] && [ "$got" = "$want" ]; then
		echo "$name 0" >>"$results"
		echo "PASS: $name"
		else
		echo "$name 1" >>"$results"
		printf 'FAIL: %s (exit %s)\n--- got:\n%s\n--- want:\n%s\n' "$name" "$rc" "$got" "$want"
		fi
		}
		results=$PWD/results
		rm -rf work
		mkdir work
		cd work || exit 1
		# IBT on in busybox's processes: the kernel's x86_Thread_features line,
		# read by grep (a child) and by the shell's read builtin.
		ibt_sh() {
		while read -r k v; do
		case $k in x86_Thread_features:) echo "$v" ;; esac
		done </proc/self/status
		}
		fib() {
		if [ "$1" -lt 2 ]; then echo "$1"; else echo $(($(fib $(($1 - 1))) + $(fib $(($1 - 2))))); fi
		}
		words() {
		local n=0 w
		for w in "$@"; do n=$((n + ${#w})); done
		echo "$n:${1%%.*}:${2#*-}"
		}
		opts() {
		local OPTIND=1 o r=
		while getopts "ab:c" o; do r="$r$o${OPTARG:-}"; done
		shift $((OPTIND - 1))
		echo "$r|$*"
		}
		heredoc() {
		x=world
		cat <<END | sed 's/^/> /'
		hello $x
		$(echo nested | tr a-z A-Z)
		END
		}
		sh_case() {
		for f in a.c b.h c.txt d; do
		case $f in *.c | *.h) printf C ;; *.txt) printf T ;; *) printf '?' ;; esac
		done
		echo
		}
		sh_trap() {
		sh -c 'trap "echo caught" USR1; kill -USR1 $$; trap "echo bye" EXIT; echo done'
		}
		sh_while_pipe() {
		seq 1 5 | while read -r i; do echo $((i * i)); done | paste -s -d+ | bc
		}
		mktree() {
		rm -rf tree
		mkdir -p tree/a/b tree/c
		for i in 1 2 3 4 5; do
		seq 1 $((i * 100)) >"tree/a/f$i.txt"
		echo "file $i" >"tree/a/b/g$i.dat"
		done
		echo hello >tree/c/h.txt
		ln -s ../a/f1.txt tree/c/link
		}
		find_xargs() {
		mktree
		find tree -type f -name '*.txt' | sort | xargs cat | md5sum | cut -d' ' -f1
		find tree -type f | wc -l
		find tree -name '*.dat' -print0 | xargs -0 -n 2 echo | wc -l
		find tree -type l -exec readlink {} \;
		}
		tar_gz() {
		mktree
		tar czf t.tgz tree && rm -rf x && mkdir x && tar xzf t.tgz -C x && diff -r tree x/tree && echo same
		tar tzf t.tgz | sort | head -3
		}
		tar_bz2() {
		mktree
		tar cjf t.tbz tree && rm -rf y && mkdir y && tar xjf t.tbz -C y && diff -r tree y/tree && echo same
		}
		gzip_big() {
		seq 1 200000 >big
		a=$(gzip -9 -c big | gunzip -c | md5sum)
		b=$(md5sum <big)
		[ "$a" = "$b" ] && echo same
		gzip -c big | wc -c | awk '{ print ($1 < 1300000) }'
		}
		bzip2_lzop() {
		seq 1 50000 >big2
		[ "$(bzip2 -c big2 | bunzip2 -c | md5sum)" = "$(md5sum <big2)" ] && echo bzip2
		[ "$(lzop -c big2 | lzop -dc | md5sum)" = "$(md5sum <big2)" ] && echo lzop
		}
		cpio_rt() {
		mktree
		find tree | sort | cpio -o -H newc 2>/dev/null >t.cpio
		rm -rf z && mkdir z && cd z && cpio -id <../t.cpio 2>/dev/null && cd .. && diff -r tree z/tree && echo same
		}
		sums() {
		printf abc | md5sum
		printf abc | sha1sum
		printf abc | sha256sum
		printf abc | sha512sum
		printf abc | sha3sum
		}
		sum_check() {
		printf 'one\n' >s1
		printf 'two\n' >s2
		sha256sum s1 s2 >SUMS
		sha256sum -c SUMS
		echo x >>s2
		sha256sum -c SUMS >/dev/null 2>&1 || echo mismatch
		}
		sorts() {
		printf '3 c\n1 a\n20 t\n2 b\n10 j\n' | sort -n | cut -d' ' -f2 | tr -d '\n'
		echo
		printf 'x,3\ny,1\nz,2\n' | sort -t, -k2,2nr | paste -s -d' '
		seq 1 20 | sort | head -3 | paste -s -d' '
		printf 'b\na\nb\nc\na\n' | sort | uniq -c | awk '{ printf "%s%s ", $2, $1 } END { print "" }'
		[ "$(seq 3000 -1 1 | sort -n | md5sum)" = "$(seq 1 3000 | md5sum)" ] && echo sorted
		}
		awks() {
		echo "a b c" | awk 'function f(x) { return x x } { for (i = 1; i <= NF; i++) printf "%s", f($i); print "" }'
		awk 'BEGIN { printf "%.3f %.3f %d\n", sqrt(2), sin(1) + cos(1), int(exp(log(1000)) + 0.5) }'
		printf 'k1 1\nk2 2\nk1 3\n' | awk '{ s[$1] += $2 } END { n = split("k1 k2", ks); for (i = 1; i <= n; i++) printf "%s=%d ", ks[i], s[ks[i]]; print "" }'
		echo "foo.bar.baz" | awk '{ n = gsub(/\./, "/"); print n, $0, toupper(substr($0, 5, 3)), length($0) }'
		seq 1 10 | awk 'NR % 3 == 0 { printf "%s;", $1 } END { print sprintf("%05.1f", NR / 4) }'
		}
		seds() {
		echo hello world | sed -e 's/o/0/g' -e 's/\(h\)/\1H/'
		seq 1 5 | sed -n '1!G;h;$p' | paste -s -d' '
		printf 'a\nb\nc\nd\n' | sed -e '2,3d' -e 's/$/!/' | paste -s -d' '
		echo abc | sed 'y/abc/xyz/'
		}
		greps() {
		printf 'Apple\nbanana\ncherry\napricot\n' >fruit
		grep -c -i '^a' fruit
		grep -v an fruit | paste -s -d' '
		grep -E 'rr|co' fruit | paste -s -d' '
		grep -o 'an' fruit | wc -l
		mktree
		grep -rl hello tree
		grep -F -x -n 'file 3' -r tree | sed 's/:.*//'
		}
		diff_patch() {
		seq 1 10 >p1
		seq 1 10 | sed 's/^5$/five/' >p2
		diff -u p1 p2 >p.diff
		[ $? = 1 ] || return 1
		patch p1 <p.diff >/dev/null && cmp p1 p2 && echo patched
		}
		misc() {
		printf 'AB' | od -An -tx1
		printf '%05.1f|%x|%s\n' 3.14159 255 hi
		expr 6 \* 7
		date -u -d @0 +%Y-%m-%d
		echo '2^64' | bc
		dc -e '2 10 ^ p'
		printf 'a\tb\tc\n' | cut -f2
		echo hello | rev
		seq 1 4 | tac | paste -s -d,
		printf 'x\ny\n' | nl -b a | awk '{ print $1 $2 }' | paste -s -d' '
		echo 'aaabbb' | tr -s ab
		basename /a/b/c.txt .txt
		dirname /a/b/c.txt
		seq 1 10 | xargs -n 3 echo | wc -l
		echo "  lead" | wc -c
		}
		files() {
		rm -rf fs && mkdir fs && cd fs || return 1
		dd if=/dev/zero of=z bs=1k count=64 2>/dev/null
		stat -c '%s' z
		truncate -s 100 z && stat -c %s z
		cp -a z z2 && mv z2 z3 && ln -s z3 l && readlink l
		[ -L l ] && [ -f z3 ] && echo ok
		seq 1 1000 >big && split -l 300 big part && ls part* | paste -s -d' '
		cat part* | cmp - big && echo joined
		chmod 640 z && stat -c %a z
		touch -d '2000-01-02 03:04:05' z && date -u -r z '+%Y %H' | cut -c1-4
		id -u
		stat -c '%U:%G' z
		cd .. && rm -r fs && echo removed
		}
		crypt() {
		cryptpw -m sha512 -S saltsalt secret
		cryptpw -m md5 -S saltsalt secret
		}
		procs() {
		ps -o comm | grep -cx ps
		sleep 5 &
		p=$!
		kill "$p"
		wait "$p" 2>/dev/null
		echo "killed $?"
		timeout 1 sleep 10 2>/dev/null
		echo "timeout $?"
		}
		hushs() {
		hush -c 'f() { echo "$1$1"; }; f ab | tr a-z A-Z; for i in 1 2 3; do printf "%s" $((i * 2)); done; echo'
		}
		check ibt-grep 1 grep -c '^x86_Thread_features:.*ibt' /proc/self/status
		check ibt-sh ibt ibt_sh
		check sh-functions 55 fib 10
		check sh-locals-params 8:a:b.c words a.x y-b.c
		check sh-getopts 'ab1c|x y' opts -a -b 1 -c x y
		check sh-heredoc '> hello world
		> NESTED' heredoc
		check sh-case 'CCT?' sh_case
		check sh-trap 'caught
		done
		bye' sh_trap
		check sh-while-pipe 55 sh_while_pipe
		check hush 'ABAB
		246' hushs
		check find-xargs 'e09602b2bd71515ed55250892c77bae9
		11
		3
		../a/f1.txt' find_xargs
		check tar-gzip 'same
		tree/
		tree/a/
		tree/a/b/' tar_gz
		check tar-bzip2 same tar_bz2
		check gzip-gunzip 'same
		1' gzip_big
		check bzip2-lzop 'bzip2
		lzop' bzip2_lzop
		check cpio same cpio_rt
		check checksums '900150983cd24fb0d6963f7d28e17f72  -
		a9993e364706816aba3e25717850c26c9cd0d89d  -
		ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad  -
		ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f  -
		e642824c3f8cf24ad09234ee7d3c766fc9a3a5168d0c94ad73b46fdf  -' sums
		check sha256sum-c 's1: OK
		s2: OK
		mismatch' sum_check
		check sort 'abcjt
		x,3 z,2 y,1
		1 10 11
		a2 b2 c1 
		sorted' sorts
		check awk 'aabbcc
		1.414 1.382 1000
		k1=4 k2=2 
		2 foo/bar/baz BAR 11
		3;6;9;002.5' awks
		check sed 'hHell0 w0rld
		5 4 3 2 1
		a! d!
		xyz' seds
		check grep '2
		Apple cherry apricot
		cherry apricot
		2
		tree/c/h.txt
		tree/a/b/g3.dat' greps
		check diff-patch patched diff_patch
		check misc ' 41 42
		003.1|ff|hi
		42
		1970-01-01
		18446744073709551616
		1024
		b
		olleh
		4,3,2,1
		1x 2y
		ab
		c
		/a/b
		4
		7' misc
		check files '65536
		100
		z3
		ok
		partaa partab partac partad
		joined
		640
		2000
		0
		root:root
		removed' files
		check cryptpw '$6$saltsalt$TVLlQcbpFVof5W3Yz4DTP6gRstiNuHwwTt6GLc1E5n0U0aDehy0S5knV8wiOQSpT0Y77vwPZN.Pq.H91p5hVO1
		$1$saltsalt$9xy1btjgzLYfb7hivXtC//' crypt
		check ps-kill-timeout '1
		killed 143
		timeout 143' procs
	EOF
	cat >"$run/run-all.sh" <<-'EOF'
		# applets.sh: one result line per check; then the testsuite as
		# Debian's build runs it; their output in out/.
		PATH=$PWD/bin:$PATH ./busybox sh ./applets.sh >out/applets 2>&1
		(cd testsuite && env bindir="${PWD%/*}" SKIP_KNOWN_BUGS=y LANG=C.UTF-8 LC_ALL=C.UTF-8 \
			SKIP_INTERNET_TESTS=y SHELL=/bin/sh ECHO=/bin/echo ./runtest) >out/testsuite 2>&1
		echo "testsuite $?" >>results
	EOF
	run_suite busybox "$run" $(($(grep -c '^check ' "$run/applets.sh") + 1))
	n=$(grep -c '^uibt exec: missing ENDBR: ' "$dir/report.txt" || true)
	[ "$n" = 4 ] || die "busybox: $((n - 4)) missing ENDBR targets besides the canary's; see ${dir#"$top"/}/report.txt"
	{
		awk '$1 != "testsuite" { n++; if ($2 == 0) p++; else print "FAIL applets.sh: " $1 }
			END { printf "busybox: applets.sh: %d of %d checks passed\n", p, n }' "$run/results"
		for f in PASS FAIL SKIPPED UNTESTED; do
			printf '%s %s, ' "$(grep -c "^$f: " "$run/out/testsuite")" "$f"
		done | sed 's/, $//; s/^/busybox: testsuite: /'
		echo
		grep '^FAIL: ' "$run/out/testsuite" | while IFS= read -r f; do
			f=${f#FAIL: }
			if printf '%s' "$busybox_known_failures" | grep -q "^$f	"; then
				echo "known failure: $f: $(printf '%s' "$busybox_known_failures" | grep "^$f	" | cut -f2)"
			else
				echo "FAIL testsuite: $f"
			fi
		done
		echo "busybox: no missing ENDBR (the canary's 4 found: IBT was enforced)"
	} | tee "$dir/summary.txt"
	! grep -q '^FAIL ' "$dir/summary.txt" || die "busybox: failures; see ${dir#"$top"/}/run/out"
}

# The negative control: busybox built without CET (-fcf-protection=none:
# no ENDBR, no IBT property; glibc would turn IBT off for it), a few
# applets run with IBT forced on (uibt exec --policy on): the report must
# name functions of busybox that lack their ENDBR.
busybox-nocet() {
	local dir=$top/build/acceptance/busybox-nocet run n
	run=$dir/run
	busybox_build busybox-nocet -fcf-protection=none
	! readelf -n "$dir/obj/busybox" | grep -q 'x86 feature: IBT' || die "busybox-nocet: IBT-marked"
	rm -rf "$run"
	mkdir -p "$run"
	cp "$dir/obj/busybox" "$run/"
	cat >"$run/run-all.sh" <<-'EOF'
		./busybox sh -c 'seq 1 2000 | ./busybox sort -rn | ./busybox md5sum' >out 2>&1
		echo "sh-sort-md5sum $?" >>results
	EOF
	run_suite busybox-nocet "$run" 1 --policy on
	n=$(grep -c "^uibt exec: missing ENDBR: $run/busybox:" "$dir/report.txt" || true)
	[ "$n" -gt 0 ] || die "busybox-nocet: no missing ENDBR found in busybox"
	echo "busybox-nocet: $n missing ENDBR targets in busybox" | tee "$dir/summary.txt"
}

[ $# -gt 0 ] || set -- libffi libffi-nocet pcre2 busybox busybox-nocet
for p; do
	case "$p" in
	libffi | libffi-nocet | pcre2 | busybox | busybox-nocet) "$p" ;;
	*) die "unknown project $p (libffi, libffi-nocet, pcre2, busybox or busybox-nocet)" ;;
	esac
done
