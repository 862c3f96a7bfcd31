#!/bin/bash
# Unit test: a clone of the repository alone builds, runs and tests
# everything. Fails when the build files, scripts, tests, sources or docs
# name a path outside the tree (the folders that used to sit beside it, or
# a CMake source dir followed by ".."), or when the root README links
# outside; and when a file the interop harness or the wire test needs is
# missing from the tree.
# usage: self_contained.sh REPO_ROOT
set -uo pipefail
root=${1:?usage: self_contained.sh REPO_ROOT}
cd "$root" || exit 1
self=tests/repo/self_contained.sh

# Fixed strings that leave the tree; split so this file does not match.
dd='..'
patterns=(
	"$dd/shared"
	"shared/kernel-peer"
	"shared/captures"
	"SOURCE_DIR}/$dd"
	"SOURCE_DIR}\"/$dd"
	"/qemu-peer"
)
places=(CMakeLists.txt cmake scripts tests src include tools examples fuzz bench docs .ci README.md)

# matches FILE...: prints "file:line: text" for every pattern found
matches() {
	local p args=()
	for p in "${patterns[@]}"; do args+=(-e "$p"); done
	grep -rnF "${args[@]}" -- "$@" 2>/dev/null
}

# The check must be able to fail: it has to find a planted reference.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# shellcheck disable=SC2016 # a literal CMake variable
printf 'set(x "${PROJECT_SOURCE_DIR}/%s/shared/captures")\n' "$dd" >"$tmp/CMakeLists.txt"
if ! matches "$tmp" >/dev/null; then
	echo "FAIL: the check does not see a planted outside path"
	exit 1
fi

fail=0
existing=()
for p in "${places[@]}"; do [ -e "$p" ] && existing+=("$p"); done
found=$(matches "${existing[@]}" | grep -v "^$self:")
if [ -n "$found" ]; then
	echo "FAIL: paths outside the repository:"
	echo "$found"
	fail=1
fi
# Markdown links of the root README are relative to the root.
if grep -nE '\]\(\.\./' README.md; then
	echo "FAIL: README.md links outside the repository"
	fail=1
fi
for f in tests/interop/harness/build-guest.sh tests/interop/harness/run-guest.sh \
	tests/interop/harness/peer-init tests/interop/harness/record-captures.sh \
	tests/interop/guest/nfs-server.sh tests/interop/guest/record-captures.sh \
	tests/data/captures/linux-siw-nfsv3.pcap.gz tests/data/captures/linux-siw-nfsv4.1.pcap.gz \
	docs/design.md; do
	[ -s "$f" ] || {
		echo "FAIL: $f is missing"
		fail=1
	}
done
[ $fail = 0 ] && echo "PASS: nothing outside the repository is referenced"
exit $fail
