#!/bin/sh
# glibc 2.36's own CET tests (sysdeps/x86/tst-cet-*, tst-setjmp-cet and the
# Linux x86 ones), built from Debian's source with --enable-cet and run
# against that glibc, the guest's C library in /lib64.  KTAP, one result
# per glibc test.
#
# cet-tests (made at build time from glibc's Makefiles) lists each test:
#   NAME|ENVIRONMENT|ARGUMENTS|STDIN
# STDIN names a test whose output is this one's input, as glibc's own rule
# has it (tst-cet-property-2 reads tst-cet-property-1's).
#
# glibc's verdict is the exit status: 0 PASS, 77 UNSUPPORTED, else FAIL.
# UNSUPPORTED is a skip, with glibc's reason (guest/tests says which
# platform feature such a test needs: shadow stack, which no platform has).
# With user IBT, a test must PASS, unless expected lists it with the status
# it must end with and why (a glibc assumption this kernel does not meet).
# Without user IBT, a test that passes checked nothing about IBT: it is
# reported as a skip; one that fails is a failure.
cd "$(dirname "$0")" || exit 1

has_ibt=0
grep -qw user_ibt /proc/cpuinfo && has_ibt=1
outdir=/tmp/glibc-cet
mkdir -p "$outdir"

total=$(grep -c '|' cet-tests)
echo "KTAP version 1"
echo "1..$total"
n=0
failed=0
while IFS='|' read -r name envs args input; do
	n=$((n + 1))
	in=/dev/null
	[ -n "$input" ] && in=$outdir/$input.out
	echo "# $name: ${envs:+env $envs }./$name $args"
	# shellcheck disable=SC2086 # environment and arguments split
	env LD_LIBRARY_PATH="$PWD" $envs timeout 120 "./$name" $args \
		<"$in" >"$outdir/$name.out" 2>&1
	rc=$?
	sed 's/^/#   /' "$outdir/$name.out"
	case $rc in
	0) verdict=PASS ;;
	77) verdict=UNSUPPORTED ;;
	*) verdict="FAIL (exit $rc)" ;;
	esac
	want=0 why=
	line=$(grep "^$name " expected 2>/dev/null)
	if [ -n "$line" ]; then
		want=$(echo "$line" | cut -d' ' -f2)
		why=$(echo "$line" | cut -d' ' -f3-)
	fi
	if [ "$rc" -eq 77 ]; then
		echo "ok $n $name # SKIP glibc says UNSUPPORTED: $(tail -n 1 "$outdir/$name.out")"
	elif [ "$has_ibt" -eq 0 ]; then
		if [ "$rc" -eq 0 ]; then
			echo "ok $n $name # SKIP no user_ibt: glibc says PASS, which checked nothing about IBT"
		else
			echo "not ok $n $name # glibc says $verdict without user IBT"
			failed=1
		fi
	elif [ "$rc" -eq "$want" ] && [ "$want" -eq 0 ]; then
		echo "ok $n $name"
	elif [ "$rc" -eq "$want" ]; then
		echo "ok $n $name # glibc says $verdict, as expected: $why"
	else
		echo "not ok $n $name # glibc says $verdict${why:+; expected exit $want: $why}"
		failed=1
	fi
done <cet-tests
exit "$failed"
