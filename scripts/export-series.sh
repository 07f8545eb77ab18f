#!/bin/bash
# Export the commits on top of "base" in build/NAME to patches/NAME, with
# git format-patch, and the series file that lists them in order.
# Usage: export-series.sh NAME
#
# If patches/NAME/cover-letter.txt exists (first line the subject, then a
# blank line and the body), the export also writes 0000-cover-letter.patch
# as "git format-patch --cover-letter" does, with that subject and body,
# the shortlog and the diffstat.  The series file lists it first, as quilt
# series do; scripts/tree.sh and check-series.sh skip it, since a cover
# letter has no diff for git am.  Its date is the last commit's, so that
# an export of unchanged commits changes nothing.
set -euo pipefail

name=${1:?usage: export-series.sh linux|qemu}
top=$(cd "$(dirname "$0")/.." && pwd)
tree=$top/build/$name
out=$top/patches/$name
cover=$out/cover-letter.txt

[ -d "$tree/.git" ] || { echo "uibt: no tree build/$name" >&2; exit 1; }

rm -f "$out"/*.patch
if [ -f "$cover" ]; then
	git -C "$tree" -c user.name="uibt developers" -c user.email=uibt@localhost \
		format-patch -q --cover-letter -o "$out" base..HEAD
	python3 - "$out/0000-cover-letter.patch" "$cover" \
		"$(git -C "$tree" log -1 --format=%aD HEAD)" <<'PY'
import sys
patch, cover, date = sys.argv[1:]
text = open(cover).read().rstrip('\n').split('\n')
subject, body = text[0], '\n'.join(text[2:] if len(text) > 1 and not text[1] else text[1:])
s = open(patch).read()
if '*** SUBJECT HERE ***' not in s or '*** BLURB HERE ***' not in s:
    sys.exit('export-series: unexpected cover letter template from git format-patch')
s = s.replace('*** SUBJECT HERE ***', subject, 1).replace('*** BLURB HERE ***', body, 1)
lines = s.split('\n')
lines = ['Date: ' + date if l.startswith('Date: ') else l for l in lines]
open(patch, 'w').write('\n'.join(lines))
PY
else
	git -C "$tree" format-patch -q -o "$out" base..HEAD
fi
: >"$out/series"
for f in "$out"/*.patch; do
	f=${f##*/}
	case "$f" in
	'*.patch') ;;
	*) echo "$f" >>"$out/series" ;;
	esac
done
echo "uibt: exported $(grep -cv '^0000-cover-letter' "$out/series") patches to patches/$name"
