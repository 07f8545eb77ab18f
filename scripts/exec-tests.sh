#!/bin/bash
# Build the subjects of uibt exec's own tests (tests/exec, run by
# harness/exec_test.py) into OUT, with "./uibt cc" (the CET glibc).
# Usage: exec-tests.sh OUT
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
src=$top/tests/exec
out=$(realpath -m "$1")
log=$out/build.log
cc=("$top/uibt" cc -O2 -g -Wall -Wextra)

die() { echo "exec-tests: $*" >&2; exit 1; }
run() { "$@" >>"$log" 2>&1 || die "'$*' failed; see $log"; }
marked() { readelf -n "$1" | grep -q 'x86 feature: IBT'; }

# shellcheck disable=SC2016 # $ORIGIN and $0 are for ld.so and sh, not here
origin='-Wl,-rpath,$ORIGIN' script='#!/bin/sh
echo "hello from $0"
exit 5'

mkdir -p "$out"
: >"$log"
run "${cc[@]}" -shared -fPIC -o "$out/libmissing.so" "$src/libmissing.S"
run "${cc[@]}" -o "$out/missing" "$src/missing.c" "$src/missing_asm.S" \
	-L"$out" -lmissing "$origin"
run "${cc[@]}" -fcf-protection=none -o "$out/missing-unmarked" "$src/missing.c" \
	"$src/missing_asm.S" -L"$out" -lmissing "$origin"
marked "$out/missing" || die "$out/missing lacks the IBT property"
marked "$out/libmissing.so" || die "$out/libmissing.so lacks the IBT property"
! marked "$out/missing-unmarked" || die "$out/missing-unmarked has the IBT property"

# make bench-exec's subject: what uibt exec costs, without a dynamic linker.
run "${cc[@]}" -static -o "$out/hello-static" -x c - <<<'#include <stdio.h>
int main(void) { puts("hello"); return 0; }'

# Bad input: a program whose library is gone, a file that is no program, a
# program for another architecture (an AArch64 ELF header), and a script.
run "${cc[@]}" -shared -fPIC -o "$out/libgone.so" -x c - <<<'int gone(void) { return 0; }'
run "${cc[@]}" -o "$out/gone" "$src/gone.c" -L"$out" -lgone
rm "$out/libgone.so"
printf 'not a program\n' >"$out/notelf"
printf '\177ELF\002\001\001\000\000\000\000\000\000\000\000\000\002\000\267\000' >"$out/aarch64"
head -c 44 /dev/zero >>"$out/aarch64"
printf '%s\n' "$script" >"$out/hello.sh"
chmod 755 "$out/notelf" "$out/aarch64" "$out/hello.sh"
echo "exec-tests: built in $out"
