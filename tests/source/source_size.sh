#!/bin/sh
# usage: source_size.sh SRC_DIR ALLOW_LIST
# Size limits of the library sources (issue 14): no .c or .h file under
# SRC_DIR over 1000 lines, no function over 120 lines. A function is
# counted from the first line of its definition to its closing brace, both
# included: the definition starts at column 0 and its body opens with a
# "{" alone on a line at column 0 and ends at the next "}" alone at column
# 0 (the layout clang-format gives every function here).
#
# ALLOW_LIST: lines "file PATH" or "function PATH NAME" (PATH relative to
# SRC_DIR's parent, e.g. src/api/client.c), '#' comments. A listed item may
# exceed its limit; a listed item that no longer does is an error too, so
# the list only shrinks. Exit 0 pass, 1 fail.
set -eu
src=$1 allow=$2
max_file=${SOURCE_SIZE_MAX_FILE:-1000}
max_func=${SOURCE_SIZE_MAX_FUNC:-120}
[ -d "$src" ] || { echo "FAIL: no directory $src"; exit 1; }
[ -f "$allow" ] || { echo "FAIL: no allow-list $allow"; exit 1; }
tmp=$(mktemp -d /tmp/rpcrdma-size.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
base=$(dirname "$src")
name=$(basename "$src")

# Every item over its limit, as "file PATH LINES" / "function PATH NAME LINES".
(cd "$base" && find "$name" -type f \( -name '*.c' -o -name '*.h' \) | LC_ALL=C sort) >"$tmp/files"
[ -s "$tmp/files" ] || { echo "FAIL: no sources under $src"; exit 1; }
: >"$tmp/over"
while read -r f; do
	awk -v max_file="$max_file" -v max_func="$max_func" -v path="$f" '
	# start of a top-level item: a line at column 0 that is not a
	# comment, a preprocessor line or a closing brace
	# (a signature may go on at column 0 after a return type line)
	/^[A-Za-z_]/ && !inbody {
		if (start && !ended)
			sig = sig " " $0
		else {
			start = NR; sig = $0
		}
		ended = $0 ~ /;[ \t]*$/
		next
	}
	/^[ \t]/ && start && !inbody { sig = sig " " $0; ended = $0 ~ /;[ \t]*$/; next }
	/^\{$/ && start && !inbody {
		inbody = 1
		fname = sig
		gsub(/__attribute__ *\(\([^()]*(\([^()]*\))?[^()]*\)\)/, "", fname)
		sub(/\(.*/, "", fname)
		sub(/.*[^A-Za-z0-9_]/, "", fname)
		next
	}
	/^\}$/ && inbody {
		n = NR - start + 1
		if (n > max_func)
			printf "function %s %s %d\n", path, fname, n
		inbody = 0; start = 0
		next
	}
	!inbody { start = 0 }
	END { if (NR > max_file) printf "file %s %d\n", path, NR }
	' "$base/$f" >>"$tmp/over"
done <"$tmp/files"

# The allow-list without comments and blank lines.
sed -e 's/#.*//' -e 's/[ \t]*$//' "$allow" | awk 'NF' >"$tmp/allow"
rc=0
while read -r kind path rest; do
	case $kind in
	file) key="file $path" n=$rest ;;
	function) key="function $path ${rest% *}" n=${rest##* } ;;
	*) echo "FAIL: unexpected line in source_size.sh output: $kind $path $rest"; exit 1 ;;
	esac
	if grep -qxF "$key" "$tmp/allow"; then
		echo "allowed: $key ($n lines)"
	else
		echo "FAIL: $key has $n lines (limit: files $max_file, functions $max_func)"
		rc=1
	fi
done <"$tmp/over"
while read -r line; do
	set -- $line
	case $1 in
	file) key="file $2" ;;
	function) key="function $2 $3" ;;
	*) echo "FAIL: $allow: not 'file PATH' or 'function PATH NAME': $line"; rc=1; continue ;;
	esac
	if ! sed 's/ [0-9]*$//' "$tmp/over" | grep -qxF "$key"; then
		echo "FAIL: $allow lists '$key', which is within its limit (or gone): remove the line"
		rc=1
	fi
done <"$tmp/allow"
[ $rc -eq 0 ] && echo "source_size: $(wc -l <"$tmp/files") files, none over $max_file lines and no function over $max_func but those allowed"
exit $rc
