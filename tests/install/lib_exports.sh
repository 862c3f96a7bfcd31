#!/bin/sh
# usage: lib_exports.sh NM LIBRPCRDMA.so LIBRPCRDMA.map INCLUDE_DIR
# The shared library exports exactly the names its version script lists,
# each under a version node, and the script lists exactly the functions the
# public headers declare with RPCRDMA_API: none missing, none extra.
set -eu
nm=$1 so=$2 map=$3 inc=$4
tmp=$(mktemp -d /tmp/rpcrdma-exports.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# Defined dynamic symbols, minus the version nodes themselves (type A).
"$nm" -D --defined-only -P "$so" >"$tmp/nm" || { echo "FAIL: $nm -D $so"; exit 1; }
awk '$2 != "A" { print $1 }' "$tmp/nm" >"$tmp/raw"
unversioned=$(grep -v '@' "$tmp/raw" || true)
[ -z "$unversioned" ] || { echo "FAIL: exported without a version node:"; echo "$unversioned"; exit 1; }
sed 's/@.*//' "$tmp/raw" | sort -u >"$tmp/so"

# Names of the version script's global: sections (comments stripped).
tr '\n' ' ' <"$map" | sed 's:/\*[^*]*\*\+\([^/*][^*]*\*\+\)*/::g' | tr ';' '\n' |
	awk '{ for (i = 1; i <= NF; i++) {
		if ($i == "global:") { on = 1; continue }
		if ($i == "local:" || $i ~ /[{}]/) { on = 0; continue }
		if (on) print $i } }' | sort -u >"$tmp/map"
pattern=$(grep -v '^[A-Za-z_][A-Za-z0-9_]*$' "$tmp/map" || true)
[ -z "$pattern" ] || { echo "FAIL: $map exports by pattern, not by name:"; echo "$pattern"; exit 1; }

# Functions declared RPCRDMA_API in the public headers (comments and
# preprocessor lines stripped; the name is the identifier before "(").
cat "$inc"/rpcrdma.h "$inc"/rpcrdma/*.h | grep -v '^[[:space:]]*#' | tr '\n' ' ' |
	sed 's:/\*[^*]*\*\+\([^/*][^*]*\*\+\)*/::g' | grep -oE 'RPCRDMA_API[^;{(]*\(' |
	sed -E 's/.*[^A-Za-z0-9_]([A-Za-z_][A-Za-z0-9_]*) *\($/\1/' | sort -u >"$tmp/hdr"

for f in so map hdr; do
	[ -s "$tmp/$f" ] || { echo "FAIL: no names found ($f)"; exit 1; }
done
rc=0
# diff_lists A B WHAT: names in A missing from B
diff_lists() {
	extra=$(comm -23 "$tmp/$1" "$tmp/$2")
	if [ -n "$extra" ]; then
		echo "FAIL: $3:"
		echo "$extra" | sed 's/^/  /'
		rc=1
	fi
}
diff_lists so map "exported by $(basename "$so") but not listed in $(basename "$map")"
diff_lists map so "listed in $(basename "$map") but not exported"
diff_lists hdr map "declared RPCRDMA_API in include/ but not listed in $(basename "$map")"
diff_lists map hdr "listed in $(basename "$map") but not declared RPCRDMA_API in include/"
[ $rc -eq 0 ] && echo "test_lib_exports: $(wc -l <"$tmp/so") symbols exported, as listed and declared"
exit $rc
