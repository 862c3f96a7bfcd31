#!/bin/sh
# usage: man_lint.sh MANDIR [SRCDIR DATE VERSION]
# Every manual page under MANDIR passes `mandoc -T lint` with no message
# of level warning or above, and lexgrog (man-db, what apropos/whatis
# index) finds its NAME section. With SRCDIR: MANDIR holds the pages as
# built from SRCDIR, each .TH line of SRCDIR has the placeholders of the
# build's date and version (nothing hard-coded) and each built one has
# DATE and "rpcrdma VERSION". Skips (77) without mandoc.
set -u
dir=$1
if [ $# -ge 4 ]; then
	bad=0
	for p in "$2"/man1/*.1 "$2"/man3/*.3; do
		rel=${p#"$2"/}
		grep -q '^\.TH [^ ]* [13] @RPCRDMA_MAN_DATE@ "rpcrdma @RPCRDMA_MAN_VERSION@" ' "$p" ||
			{ echo "FAIL: $p: .TH without the build's date and version"; bad=1; }
		grep -q "^\.TH [^ ]* [13] $3 \"rpcrdma $4\" " "$dir/$rel" ||
			{ echo "FAIL: $dir/$rel: .TH is not date $3, version $4"; bad=1; }
	done
	[ $bad -eq 0 ] || exit 1
fi
command -v mandoc >/dev/null 2>&1 || { echo "mandoc not installed: skipped"; exit 77; }
n=0 bad=0
for p in "$dir"/man1/*.1 "$dir"/man3/*.3; do
	[ -f "$p" ] || continue
	n=$((n + 1))
	if ! out=$(mandoc -T lint -W warning "$p" 2>&1) || [ -n "$out" ]; then
		echo "FAIL: $p: $out"
		bad=1
	fi
	if command -v lexgrog >/dev/null 2>&1 && ! lexgrog "$p" >/dev/null 2>&1; then
		echo "FAIL: $p: lexgrog finds no NAME section"
		bad=1
	fi
done
[ "$n" -ge 3 ] || { echo "FAIL: only $n pages under $dir"; exit 1; }
[ $bad -eq 0 ] || exit 1
echo "man_lint: $n pages clean"
