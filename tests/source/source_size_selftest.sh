#!/bin/sh
# usage: source_size_selftest.sh SOURCE_SIZE_SH
# source_size.sh on made-up trees: it passes a 120-line function and a
# 1000-line file, fails on one line more of either, names the function
# (also after an __attribute__ or a return type on a line of its own, and
# with a goto label at column 0 in the body), honours the allow-list and
# fails on an allow-list entry that is within its limit. Exit 0 pass, 1 fail.
set -eu
check=$1
tmp=$(mktemp -d /tmp/rpcrdma-size-self.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail=0

# A function of $2 lines in total (signature to closing brace) into $1,
# its signature given by $3 (one or two lines).
func() {
	printf '%s\n{\n' "$3" >>"$1"
	sig=$(printf '%s\n' "$3" | wc -l)
	i=$((sig + 2))
	while [ $i -lt "$2" ]; do
		if [ $i -eq $((sig + 2)) ]; then
			printf 'out:\n' >>"$1"
		else
			printf '\tx++;\n' >>"$1"
		fi
		i=$((i + 1))
	done
	printf '}\n\n' >>"$1"
}

# expect WANT_RC WHAT TREE ALLOW [GREP...]: run the check on TREE/src
expect() {
	want=$1 what=$2 tree=$3 allow=$4
	shift 4
	rc=0
	sh "$check" "$tree/src" "$allow" >"$tmp/out" 2>&1 || rc=$?
	if [ "$rc" -ne "$want" ]; then
		echo "FAIL: $what: exit $rc, want $want"; cat "$tmp/out"; fail=1; return
	fi
	for pat in "$@"; do
		grep -q -- "$pat" "$tmp/out" || { echo "FAIL: $what: no '$pat' in:"; cat "$tmp/out"; fail=1; }
	done
	echo "ok: $what"
}

: >"$tmp/none"
mk() { rm -rf "$tmp/t"; mkdir -p "$tmp/t/src/a"; }

mk
func "$tmp/t/src/a/f.c" 120 'static int at_limit(int x)'
func "$tmp/t/src/a/f.c" 120 '__attribute__((noinline)) static int
at_limit2(int x, int y)'
expect 0 "120-line functions pass" "$tmp/t" "$tmp/none"

mk
func "$tmp/t/src/a/f.c" 121 'static int one_more(int x)'
expect 1 "a 121-line function fails" "$tmp/t" "$tmp/none" "function src/a/f.c one_more has 121 lines"

mk
func "$tmp/t/src/a/g.h" 130 '__attribute__((always_inline)) static inline bool
in_header(struct s *p,
	  int n)'
expect 1 "the name after __attribute__ and a return type line" "$tmp/t" "$tmp/none" \
	"function src/a/g.h in_header has 130 lines"

mk
func "$tmp/t/src/a/f.c" 121 'static int one_more(int x)'
printf 'function src/a/f.c one_more\n' >"$tmp/allow"
expect 0 "an allow-listed function passes" "$tmp/t" "$tmp/allow" "allowed: function src/a/f.c one_more"

mk
func "$tmp/t/src/a/f.c" 50 'static int one_more(int x)'
expect 1 "an allow-list entry within its limit fails" "$tmp/t" "$tmp/allow" "remove the line"

mk
awk 'BEGIN { for (i = 0; i < 1000; i++) print "/* */" }' >"$tmp/t/src/a/big.c"
expect 0 "a 1000-line file passes" "$tmp/t" "$tmp/none"
echo '/* */' >>"$tmp/t/src/a/big.c"
expect 1 "a 1001-line file fails" "$tmp/t" "$tmp/none" "file src/a/big.c has 1001 lines"
printf '# a comment\nfile src/a/big.c  # trailing comment\n' >"$tmp/allow"
expect 0 "an allow-listed file passes" "$tmp/t" "$tmp/allow"

exit $fail
