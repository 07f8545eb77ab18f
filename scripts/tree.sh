#!/bin/bash
# Make build/NAME (NAME: linux or qemu) a git tree of Debian's source with our
# series patches/NAME applied.
#
#   linux: linux-source-6.12 (the package's tarball)
#   qemu:  the qemu source package (apt-get source, Debian patches applied)
#
# The tree is created once (extract, base commit, tag "base").  When the series
# changes, the tree is reset to "base" and the series applied again with git am;
# git only rewrites files that differ, so the kernel build stays incremental.
# Work committed in the tree but not yet exported to patches/linux is never
# thrown away: the script stops and says how to export it.
set -euo pipefail

name=${1:?usage: tree.sh linux|qemu}
top=$(cd "$(dirname "$0")/.." && pwd)
tree=$top/build/$name
series_dir=$top/patches/$name
stamp=$tree/.git/uibt-series

# Pinned source versions: the series is made against exactly these.
LINUX_TARBALL=/usr/src/linux-source-6.12.tar.xz
QEMU_SOURCE=qemu=1:7.2+dfsg-7+deb12u18

die() { echo "tree $name: $*" >&2; exit 1; }

# Unpack the pristine source into $1.
fetch_linux() {
	[ -f "$LINUX_TARBALL" ] || die "$LINUX_TARBALL is missing: run 'make deps' (installs linux-source-6.12)"
	echo "tree linux: extracting $(basename "$LINUX_TARBALL")"
	tar -C "$1" --strip-components=1 -xJf "$LINUX_TARBALL"
}

fetch_qemu() {
	local dl=$top/build/dl/qemu
	mkdir -p "$dl"
	if ! ls "$dl"/qemu_*.dsc >/dev/null 2>&1; then
		echo "tree qemu: downloading the source package $QEMU_SOURCE"
		(cd "$dl" && apt-get source -qq --download-only "$QEMU_SOURCE") ||
			die "apt-get source failed: run 'make deps' (adds a deb-src entry) and check the network"
	fi
	echo "tree qemu: unpacking (Debian patches applied)"
	rmdir "$1"
	dpkg-source -q -x --no-copy "$(ls "$dl"/qemu_*.dsc)" "$1" >/dev/null
}

# The patches to git am, in order: the series file without comments and
# without the cover letter, which is for reviewers and has no diff.
series_files() {
	local p
	while read -r p; do
		case "$p" in ''|\#*|0000-cover-letter.patch) continue ;; esac
		echo "$series_dir/$p"
	done <"$series_dir/series"
}

series_hash() {
	local f
	{
		for f in $(series_files); do
			[ -f "$f" ] || die "patches/$name/series lists $(basename "$f"), which does not exist"
			sha1sum <"$f"
		done
	} | sha1sum | cut -d' ' -f1
}

git_tree() { git -C "$tree" -c user.name=uibt -c user.email=uibt@localhost "$@"; }

create_tree() {
	local t=$tree.tmp
	rm -rf "$t"
	mkdir -p "$t"
	"fetch_$name" "$t"
	git -C "$t" init -q
	# Force-add the pristine tree: Debian's kernel .gitignore ignores
	# everything at the top level (its packaging repository only tracks
	# debian/).  Then drop that stanza, so new files show up as upstream.
	git -C "$t" add -f -A
	git -C "$t" -c user.name=uibt -c user.email=uibt@localhost \
		commit -q -m "Debian $name source, as packaged"
	if grep -q '^# Debian packaging: ignore everything' "$t/.gitignore" 2>/dev/null; then
		sed -i '/^# Debian packaging: ignore everything/,$d' "$t/.gitignore"
		git -C "$t" -c user.name=uibt -c user.email=uibt@localhost \
			commit -q -a -m "Drop Debian's top-level ignore-everything stanza"
	fi
	git -C "$t" tag base
	mv "$t" "$tree"
}

apply_series() {
	local want=$1 f
	git_tree reset -q --hard base
	for f in $(series_files); do
		git_tree am -q --whitespace=nowarn "$f" ||
			die "git am failed on $(basename "$f"); the tree is left mid-am in $tree"
	done
	printf '%s %s\n' "$want" "$(git_tree rev-parse HEAD)" >"$stamp"
	echo "tree $name: applied $(series_files | wc -l) patches on base"
}

# Patch ids of the series files and of the commits on top of "base".
series_ids() {
	local f
	for f in $(series_files); do
		git patch-id --stable <"$f" | cut -d' ' -f1
	done
}
tree_ids() {
	git_tree format-patch -q --stdout base..HEAD | git patch-id --stable | cut -d' ' -f1
}

[ -d "$tree/.git" ] || create_tree

want=$(series_hash)
have=
applied_head=
if [ -f "$stamp" ]; then
	read -r have applied_head <"$stamp"
fi
[ "$want" = "$have" ] && exit 0

# The series changed.  If the tree already holds exactly the series (it was
# just exported from here), only the stamp is out of date.
if [ -z "$(git_tree status --porcelain --untracked-files=no)" ] &&
	[ "$(tree_ids)" = "$(series_ids)" ]; then
	printf '%s %s\n' "$want" "$(git_tree rev-parse HEAD)" >"$stamp"
	exit 0
fi
# Otherwise reset and apply, but never over unexported work.
[ -n "$applied_head" ] || applied_head=$(git_tree rev-parse base)
if [ "$(git_tree rev-parse HEAD)" != "$applied_head" ]; then
	die "$tree has commits that are not in patches/$name.
Export them first:  make export-$name   (or drop them: git -C $tree reset --hard $applied_head)"
fi
if [ -n "$(git_tree status --porcelain --untracked-files=no)" ]; then
	die "$tree has uncommitted changes: commit and export them (make export-$name) or drop them"
fi
apply_series "$want"
