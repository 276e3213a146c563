#!/usr/bin/env bash
# refresh.sh vendors uPlot (https://github.com/leeoniya/uPlot, MIT) for the
# dashboard from its npm package:
#
#   dist/uPlot.iife.min.js, dist/uPlot.min.css, LICENSE -> this directory
#
# Usage:
#   dashboard/static/vendor/refresh.sh [VERSION]
#
# Without VERSION the version pinned in VERSION is used, so a plain run must
# reproduce the committed files byte for byte (git diff shows nothing).
# With VERSION (for example 1.6.33) the files are replaced by that version's
# and VERSION is rewritten: review the upstream changelog, then look at the
# page in a browser before committing.
#
# Needs bash, npm (npm pack, npm view: the registry npm is configured with),
# tar, sha256sum, openssl and base64.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

case ${1:-} in
-h|--help) sed -n '2,17p' "${BASH_SOURCE[0]}"; exit 0 ;;
esac
[ $# -le 1 ] || { echo "refresh.sh: at most one argument, the version (see --help)" >&2; exit 2; }

version=${1:-}
if [ -z "$version" ]; then
	version=$(awk -F'\t' '$1 == "version" { print $2 }' "$here/VERSION" 2>/dev/null || true)
fi
if [ -z "$version" ]; then
	echo "refresh.sh: no version given and none pinned in $here/VERSION" >&2
	exit 2
fi
if ! [[ $version =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]]; then
	echo "refresh.sh: version $version is not an exact version (x.y.z): pin one" >&2
	exit 2
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# npm pack checks the tarball against the registry's integrity; check it
# again here against what the registry says, and record it.
tgz=$(cd "$tmp" && npm pack --silent "uplot@$version" 2>/dev/null | tail -n 1)
[ -f "$tmp/$tgz" ] || { echo "refresh.sh: npm pack uplot@$version gave no tarball" >&2; exit 1; }
integrity="sha512-$(openssl dgst -sha512 -binary "$tmp/$tgz" | base64 -w0)"
registry=$(npm view --silent "uplot@$version" dist.integrity 2>/dev/null)
if [ "$integrity" != "$registry" ]; then
	echo "refresh.sh: uplot@$version: tarball integrity $integrity differs from the registry's $registry" >&2
	exit 1
fi

tar -xzf "$tmp/$tgz" -C "$tmp"
for f in dist/uPlot.iife.min.js dist/uPlot.min.css LICENSE; do
	[ -s "$tmp/package/$f" ] || { echo "refresh.sh: uplot@$version has no $f" >&2; exit 1; }
done
grep -q 'The MIT License' "$tmp/package/LICENSE" || {
	echo "refresh.sh: uplot@$version's LICENSE is no longer the MIT licence: review it and fix VERSION" >&2
	exit 1
}
# The page runs under a Content-Security-Policy without 'unsafe-eval'.
if grep -q 'new Function\|eval(' "$tmp/package/dist/uPlot.iife.min.js"; then
	echo "refresh.sh: uplot@$version's uPlot.iife.min.js uses eval or new Function: the dashboard's CSP forbids it" >&2
	exit 1
fi

cp "$tmp/package/dist/uPlot.iife.min.js" "$tmp/package/dist/uPlot.min.css" "$tmp/package/LICENSE" "$here/"

{
	printf '# uPlot vendored for the dashboard, written by refresh.sh: do not edit.\n'
	printf 'name\tuplot\n'
	printf 'version\t%s\n' "$version"
	printf 'source\thttps://github.com/leeoniya/uPlot (npm: uplot@%s)\n' "$version"
	printf 'licence\tMIT (LICENSE)\n'
	printf 'integrity\t%s\n' "$integrity"
	for f in uPlot.iife.min.js uPlot.min.css LICENSE; do
		printf 'sha256\t%s\t%s\n' "$(sha256sum "$here/$f" | cut -d' ' -f1)" "$f"
	done
} >"$here/VERSION"

echo "uplot $version: $integrity"
