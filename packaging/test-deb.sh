#!/usr/bin/env bash
# Checks the logtally .deb: bash packaging/test-deb.sh [dist/logtally_*.deb]
# (without an argument it runs `make deb` first).
#   - contents (dpkg-deb -c) and control (dpkg-deb -I): binary, unit and its
#     ExecStart, sysusers file, docs, conffiles (every file under /etc);
#   - lintian, if installed: any E: fails, warnings are printed;
#   - as root with dpkg and CI set: installs it with dpkg -i (a policy-rc.d
#     forbids starting services), checks the logtally user, that the unit is
#     not enabled, `logtally version`, then purges it.
set -euo pipefail
cd "$(dirname "$0")/.."

fail() { echo "test-deb: FAIL: $*" >&2; exit 1; }
ok() { echo "test-deb: ok: $*"; }

if [ $# -eq 0 ]; then
	make deb
	set -- dist/*.deb
fi
[ $# -eq 1 ] || fail "want one .deb, got: $*"
deb=$1
[ -f "$deb" ] || fail "$deb: no such file"
command -v dpkg-deb >/dev/null || fail "dpkg-deb not found"

version=$(dpkg-deb -f "$deb" Version)
[ "$(dpkg-deb -f "$deb" Package)" = logtally ] || fail "package name is not logtally"
[[ $version =~ ^[0-9] ]] || fail "version $version does not start with a digit"
ok "$deb: logtally $version"

echo "--- dpkg-deb -c"
listing=$(dpkg-deb -c "$deb")
echo "$listing"
has() { # has MODE PATH: the listing holds PATH with a mode starting MODE
	awk -v m="$2" -v p="./${1#/}" '$6 == p && index($1, m) == 1 { f = 1 } END { exit !f }' <<<"$listing" ||
		fail "package lacks $1 ($2)"
	ok "contains $1"
}
has /usr/bin/logtally -rwxr-xr-x
has /usr/lib/systemd/system/logtally.service -rw-r--r--
has /usr/lib/systemd/system/logtally-dashboard.service -rw-r--r--
has /usr/lib/sysusers.d/logtally.conf -rw-r--r--
has /etc/logtally/logtally.toml -rw-r--r--
has /etc/logtally/sites.d/ d
has /usr/share/doc/logtally/README.md -rw-r--r--
has /usr/share/doc/logtally/copyright -rw-r--r--
for f in systemd/sites.d/*.toml; do
	[ -e "$f" ] && has "/etc/logtally/sites.d/$(basename "$f")" -rw-r--r--
done

extract() { dpkg-deb --fsys-tarfile "$deb" | tar -xO "./${1#/}"; }
# Read whole before grep: grep -q stops early, and with pipefail the
# writer's SIGPIPE would fail the check.
unit=$(extract /usr/lib/systemd/system/logtally.service)
grep -q '^ExecStart=/usr/bin/logtally run ' <<<"$unit" ||
	fail "the unit's ExecStart does not run /usr/bin/logtally"
ok "the unit's ExecStart is /usr/bin/logtally"
cmp -s <(extract /usr/lib/sysusers.d/logtally.conf) systemd/logtally.sysusers ||
	fail "the sysusers file differs from systemd/logtally.sysusers"

echo "--- dpkg-deb -I"
dpkg-deb -I "$deb"
conffiles=$(dpkg-deb -I "$deb" conffiles 2>/dev/null || true)
for f in $(awk '$1 ~ /^-/ && $6 ~ /^\.\/etc\// { print substr($6, 2) }' <<<"$listing"); do
	grep -qx "$f" <<<"$conffiles" || fail "$f is not a conffile"
	ok "conffile $f"
done
grep -qx /etc/logtally/logtally.toml <<<"$conffiles" || fail "/etc/logtally/logtally.toml is not a conffile"
for s in postinst prerm postrm; do
	dpkg-deb -I "$deb" "$s" >/dev/null 2>&1 || fail "no $s script"
done
ok "postinst, prerm, postrm"

echo "--- lintian"
if command -v lintian >/dev/null; then
	lint=$(lintian --tag-display-limit 0 "$deb" 2>&1) || true
	echo "${lint:-(no tags)}"
	if grep -q '^E:' <<<"$lint"; then
		fail "lintian reports errors"
	fi
	ok "lintian: no errors ($(grep -c '^W:' <<<"$lint" || true) warnings)"
else
	echo "test-deb: lintian not installed: skipped (apt-get install lintian)"
fi

if [ "$(id -u)" != 0 ] || ! command -v dpkg >/dev/null || [ -z "${CI:-}" ]; then
	echo "test-deb: install test skipped (needs root, dpkg and CI set)"
	echo "test-deb: package checks passed"
	exit 0
fi

echo "--- install"
if dpkg-query -W -f '${Status}' logtally 2>/dev/null | grep -q 'installed'; then
	fail "logtally is installed on this machine already; not touching it"
fi
# A logtally user left by an earlier run (purge keeps system users): remove
# it so that the install is seen to create it. Only a system user whose home
# is the state dir, which is what this package makes.
if getent passwd logtally >/dev/null; then
	IFS=: read -r _ _ uid _ _ home _ < <(getent passwd logtally)
	if [ "$uid" -lt 1000 ] && [ "$home" = /var/lib/logtally ]; then
		echo "test-deb: removing the logtally user left by an earlier install"
		userdel logtally
		! getent group logtally >/dev/null || groupdel logtally
	else
		fail "a user logtally (uid $uid, home $home) exists that this package did not make"
	fi
fi

policy=""
cleanup() {
	dpkg --purge logtally >/dev/null 2>&1 || true
	[ -z "$policy" ] || rm -f /usr/sbin/policy-rc.d
}
trap cleanup EXIT
if [ ! -e /usr/sbin/policy-rc.d ]; then
	printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
	chmod 755 /usr/sbin/policy-rc.d
	policy=1
fi

DEBIAN_FRONTEND=noninteractive dpkg -i "$deb" || fail "dpkg -i $deb"
dpkg-query -W -f '${Status}\n' logtally | grep -qx 'install ok installed' || fail "not installed"
ok "dpkg -i"
id logtally || fail "no user logtally"
id -nG logtally | tr ' ' '\n' | grep -qx adm || fail "logtally is not in group adm"
[ "$(getent passwd logtally | cut -d: -f6)" = /var/lib/logtally ] || fail "logtally's home is not /var/lib/logtally"
ok "user logtally, in adm, home /var/lib/logtally"
[ ! -e /etc/systemd/system/multi-user.target.wants/logtally.service ] || fail "the service was enabled"
[ ! -e /etc/systemd/system/multi-user.target.wants/logtally-dashboard.service ] || fail "the dashboard's service was enabled"
ok "services not enabled"
out=$(/usr/bin/logtally version) || fail "logtally version failed"
echo "$out"
[[ $out == "logtally $version "* ]] || fail "logtally version prints \"$out\", not version $version"
ok "logtally version prints $version"
dpkg-query -W -f '${Conffiles}\n' logtally | grep -q ' /etc/logtally/logtally.toml ' || fail "conffile not registered"
ok "conffile registered"

dpkg --purge logtally || fail "dpkg --purge"
[ ! -e /usr/bin/logtally ] || fail "/usr/bin/logtally left after purge"
[ ! -e /etc/logtally/logtally.toml ] || fail "/etc/logtally/logtally.toml left after purge"
! dpkg-query -W -f '${Status}' logtally 2>/dev/null | grep -q installed || fail "still installed after purge"
ok "purged"
echo "test-deb: package and install checks passed"
