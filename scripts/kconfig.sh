#!/bin/bash
# Configure the kernel build folder: tinyconfig, then our fragment(s), then
# check that every option of the fragments took effect (as set by the last
# fragment that sets it: config/debug.config overrides the others).
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
declare -A last=()
order=()
while IFS= read -r line; do
	case "$line" in
	CONFIG_*=*) opt=${line%%=*} ;;
	# merge_config.sh takes this form of =n too
	'# CONFIG_'*' is not set')
		opt=${line#'# '}
		opt=${opt%' is not set'}
		line=$opt=n
		;;
	*) continue ;;
	esac
	[ -n "${last[$opt]+set}" ] || order+=("$opt")
	last[$opt]=$line
done < <(cat "$@")
bad=0
for opt in "${order[@]}"; do
	line=${last[$opt]}
	case "$line" in
	*=n) want="# $opt is not set" ;;
	*) want=$line ;;
	esac
	if ! grep -qxF -- "$want" "$out/.config"; then
		echo "kconfig: '$line' did not take effect (missing dependency?)" >&2
		bad=1
	fi
done
exit "$bad"
