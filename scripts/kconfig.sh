#!/bin/bash
# Configure the kernel build folder: tinyconfig, then our fragment(s), then
# check that every option of the fragments took effect.
# Usage: kconfig.sh SRC OUT FRAGMENT...
# KCONFIG_LENIENT=1 skips the check (check-series builds patches that come
# before the one adding an option).
set -euo pipefail

src=$(realpath "$1")
mkdir -p "$2"
out=$(realpath "$2")
shift 2

make -s -C "$src" O="$out" tinyconfig >/dev/null
"$src/scripts/kconfig/merge_config.sh" -m -O "$out" "$out/.config" "$@" >/dev/null
make -s -C "$src" O="$out" olddefconfig >/dev/null

[ -z "${KCONFIG_LENIENT:-}" ] || exit 0
bad=0
while IFS= read -r line; do
	case "$line" in
	CONFIG_*=n) opt=${line%%=*}
		want="# $opt is not set" ;;
	CONFIG_*=*) want=$line ;;
	*) continue ;;
	esac
	if ! grep -qxF -- "$want" "$out/.config"; then
		echo "kconfig: '$line' did not take effect (missing dependency?)" >&2
		bad=1
	fi
done < <(cat "$@")
exit "$bad"
