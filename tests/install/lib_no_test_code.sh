#!/bin/sh
# usage: lib_no_test_code.sh NM REGEX LIB...
# Fails when a symbol of a shipped library (static: every member; shared:
# its full symbol table and its dynamic one) matches REGEX, an extended
# regular expression naming test-only code (RPCRDMA_TEST_HOOKS).
set -eu
nm=$1 re=$2
shift 2
tmp=$(mktemp /tmp/rpcrdma-nm.XXXXXX)
trap 'rm -f "$tmp"' EXIT
rc=0
for lib in "$@"; do
	# -P: "name type [value size]" per line; archive members start with a
	# "lib[member]:" line, skipped.
	"$nm" -P "$lib" >"$tmp" || { echo "FAIL: $nm $lib"; exit 1; }
	case $lib in
	*.so*) "$nm" -D -P "$lib" >>"$tmp" || { echo "FAIL: $nm -D $lib"; exit 1; } ;;
	esac
	names=$(awk 'NF >= 2 && $1 !~ /:$/ { sub(/@.*/, "", $1); print $1 }' "$tmp" | sort -u)
	# The check means something only if nm read the symbols.
	echo "$names" | grep -qx rpcrdma_version || { echo "FAIL: no symbols read from $lib"; exit 1; }
	bad=$(echo "$names" | grep -E "$re" || true)
	if [ -n "$bad" ]; then
		echo "FAIL: test-only symbols in $lib:"
		echo "$bad" | sed 's/^/  /'
		rc=1
	else
		echo "$(basename "$lib"): $(echo "$names" | wc -l) symbols, none matches $re"
	fi
done
exit $rc
