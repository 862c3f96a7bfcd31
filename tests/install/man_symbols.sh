#!/bin/sh
# usage: man_symbols.sh LIBRPCRDMA.MAP MANDIR TOOL...
# Every function the version script exports is named on the NAME line of
# a section 3 page under MANDIR (which `man FUNCTION` then finds, through
# the .so links man/CMakeLists.txt installs), and every TOOL has a
# section 1 page.
set -u
map=$1 dir=$2
shift 2
names=$(for p in "$dir"/man3/*.3; do
	awk '/^\.SH NAME/ { getline; sub(/ \\-.*/, ""); gsub(/,/, " "); print; exit }' "$p"
done | tr ' ' '\n' | sort -u)
syms=$(sed -n '/global:/,/local:/p' "$map" | sed 's,/\*.*\*/,,' | tr -d ' \t;' | grep '^rpcrdma_')
[ -n "$syms" ] || { echo "FAIL: no symbols read from $map"; exit 1; }
missing=""
n=0
for s in $syms; do
	n=$((n + 1))
	echo "$names" | grep -qx "$s" || missing="$missing $s"
done
for t in "$@"; do
	[ -f "$dir/man1/$t.1" ] || missing="$missing $t(1)"
done
[ -z "$missing" ] || { echo "FAIL: no manual page for:$missing"; exit 1; }
echo "man_symbols: all $n exported functions and $# tools have a page"
