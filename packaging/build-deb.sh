#!/usr/bin/env bash
# Builds dist/logtally_<version>_<arch>.deb (what `make deb` runs).
#   version: `git describe --tags --always --dirty` made a Debian version,
#     also compiled into the binary (logtally version):
#       v1.2.3                -> 1.2.3
#       v1.2.3-rc1            -> 1.2.3~rc1
#       v1.2.3-4-gabcdef0     -> 1.2.3+git20250102030405.4.abcdef0
#       abcdef0 (no tag)      -> 0.0.0~git20250102030405.abcdef0
#       ...-dirty             -> ...+dirty (or .dirty after a +)
#     the date is the commit's (UTC), so that versions sort by commit.
#   LOGTALLY_VERSION, MAINTAINER and GOARCH override.
# nfpm runs through `go run` at a pinned version from the Go module proxy; a
# failure there fails the build.
set -euo pipefail
cd "$(dirname "$0")/.."

NFPM=github.com/goreleaser/nfpm/v2/cmd/nfpm@v2.45.2
out=dist

debian_version() {
	local desc date sha tag n
	git rev-parse HEAD >/dev/null 2>&1 || { echo 0.0.0~unknown; return; }
	# Without a tag, --always gives the bare (maybe all-digit-led) hash.
	desc=$(git describe --tags --dirty 2>/dev/null) || desc=$(git describe --tags --always --dirty)
	date=$(TZ=UTC git log -1 --format=%cd --date=format-local:%Y%m%d%H%M%S)
	sha=$(git rev-parse --short=12 HEAD)
	local dirty=""
	case "$desc" in *-dirty) dirty=1; desc=${desc%-dirty} ;; esac
	local v
	if [[ $desc =~ ^v?([0-9].*)-([0-9]+)-g[0-9a-f]+$ ]]; then
		tag=${BASH_REMATCH[1]} n=${BASH_REMATCH[2]}
		v="${tag//-/\~}+git$date.$n.$sha"
	elif git describe --tags >/dev/null 2>&1 && [[ $desc =~ ^v?([0-9].*)$ ]]; then
		v=${BASH_REMATCH[1]//-/\~}
	else
		v="0.0.0~git$date.$sha"
	fi
	if [ -n "$dirty" ]; then
		case "$v" in *+*) v="$v.dirty" ;; *) v="$v+dirty" ;; esac
	fi
	# Only what a Debian upstream version may hold (no '-': no revision).
	v=$(printf '%s' "$v" | tr -c 'A-Za-z0-9.+~' '.')
	printf '%s\n' "$v"
}

version=${LOGTALLY_VERSION:-$(debian_version)}
if ! [[ $version =~ ^[0-9][A-Za-z0-9.+~]*$ ]]; then
	echo "build-deb: $version is not a Debian version (digits first; A-Za-z0-9.+~)" >&2
	exit 2
fi
arch=${GOARCH:-$(go env GOARCH)}
maintainer=${MAINTAINER:-logtally developers <logtally@example.org>}
# Reproducible: file times in the package are the commit's.
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}

rm -rf "$out"
mkdir -p "$out"
echo "build-deb: logtally $version ($arch)"

# Static, like every Go binary Debian builds (packaging/lintian-overrides).
CGO_ENABLED=0 GOOS=linux GOARCH=$arch go build -trimpath \
	-ldflags "-s -w -X main.version=$version" -o "$out/logtally" ./cmd/logtally

# The Debian changelog (a native package: changelog.gz), one entry per build.
commit=$(git rev-parse HEAD 2>/dev/null || echo unknown)
when=$(date -u -R -d "@$SOURCE_DATE_EPOCH")
{
	printf 'logtally (%s) unstable; urgency=medium\n\n' "$version"
	printf '  * Built from git commit %s.\n\n' "$commit"
	printf ' -- %s  %s\n' "$maintainer" "$when"
} | gzip -n -9 >"$out/changelog.gz"

# The nfpm config, plus the example site files if there are any.
cp packaging/nfpm.yaml "$out/nfpm.yaml"
for f in systemd/sites.d/*.toml; do
	[ -e "$f" ] || continue
	cat >>"$out/nfpm.yaml" <<EOT
  - src: $f
    dst: /etc/logtally/sites.d/$(basename "$f")
    type: config|noreplace
    file_info:
      mode: 0644
EOT
done

LOGTALLY_VERSION=$version LOGTALLY_ARCH=$arch LOGTALLY_MAINTAINER=$maintainer \
	go run "$NFPM" package --config "$out/nfpm.yaml" --packager deb --target "$out/"
rm -f "$out/nfpm.yaml" "$out/changelog.gz"
ls -l "$out"/*.deb
