#!/usr/bin/env bash
# build-deb.sh BIN OUTDIR: builds spoold_<version>_<arch>.deb into OUTDIR
# from `make install` into a staging tree (PREFIX=/usr, as Debian has it),
# with Debian's own tools: dpkg-shlibdeps for the library dependencies
# (librrd, libc), dpkg-deb for the package. The maintainer scripts are in
# packaging/deb/ (the user, the directories, the unit enabled and not
# started); /etc/spoold's files are conffiles. Prints the .deb's path.
set -euo pipefail

bin=$1 out=$2
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
for tool in dpkg-deb dpkg-shlibdeps dpkg-architecture; do
	command -v "$tool" >/dev/null || { echo "build-deb: $tool is missing: install dpkg-dev" >&2; exit 1; }
done

# The version sorts: a tag v1.2.3 gives 1.2.3, commits after it
# 1.2.3+git<YYYYMMDD>.<hash>, an untagged tree 0.0~git<YYYYMMDD>.<hash>
# (before any release); the date is the commit's, so later commits sort
# later. A tree with uncommitted changes adds +dirty. The Debian revision
# is 1: the packaging lives in this repository.
commit=$(git -C "$root" rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
date=$(git -C "$root" log -1 --format=%cd --date=format:%Y%m%d 2>/dev/null || date -u +%Y%m%d)
tag=$(git -C "$root" describe --tags --abbrev=0 --match 'v[0-9]*' 2>/dev/null || true)
if [ -n "$tag" ] && [ "$(git -C "$root" rev-list -n1 "$tag")" = "$(git -C "$root" rev-parse HEAD)" ]; then
	upstream=${tag#v}
elif [ -n "$tag" ]; then
	upstream=${tag#v}+git$date.$commit
else
	upstream=0.0~git$date.$commit
fi
if [ -n "$(git -C "$root" status --porcelain --untracked-files=no 2>/dev/null)" ]; then
	upstream=$upstream+dirty
fi
version=$upstream-1
# The maintainer: Debian's DEBFULLNAME and DEBEMAIL when set, else the
# committer of the packaged commit.
maintainer_name=${DEBFULLNAME:-$(git -C "$root" log -1 --format=%cn 2>/dev/null || echo "spoold developers")}
maintainer_mail=${DEBEMAIL:-$(git -C "$root" log -1 --format=%ce 2>/dev/null || echo "")}
maintainer="$maintainer_name <$maintainer_mail>"
arch=$(dpkg-architecture -qDEB_HOST_ARCH)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
stage=$work/stage
make -s -C "$root" install GOBUILDFLAGS=-buildmode=pie BIN="$bin" DESTDIR="$stage" PREFIX=/usr SYSCONFDIR=/etc >/dev/null
gzip -9n "$stage/usr/share/man/man8/spoold.8"
# Debian strips binaries (dh_strip's sections); the symbols stay in bin/.
strip --remove-section=.comment --remove-section=.note --strip-unneeded "$stage/usr/bin/spoold"

# /usr/share/doc/spoold: the copyright file and the Debian changelog.
doc=$stage/usr/share/doc/spoold
mkdir -p "$doc"
install -m 0644 "$here/deb/copyright" "$doc/copyright"
{
	printf 'spoold (%s) unstable; urgency=medium\n\n' "$version"
	printf '  * Built from commit %s.\n\n' "$(git -C "$root" rev-parse HEAD 2>/dev/null || echo unknown)"
	printf ' -- %s  %s\n' "$maintainer" "$(git -C "$root" log -1 --format=%cD 2>/dev/null || date -uR)"
} | gzip -9n >"$doc/changelog.Debian.gz"
chmod 0644 "$doc/changelog.Debian.gz"

# dpkg-shlibdeps wants a source package's debian/control around it.
mkdir -p "$work/debian"
printf 'Source: spoold\n\nPackage: spoold\nArchitecture: any\n' >"$work/debian/control"
shlibs=$(cd "$work" && dpkg-shlibdeps -O "$stage/usr/bin/spoold" 2>/dev/null)
shlibs=${shlibs#shlibs:Depends=}

mkdir -p "$stage/DEBIAN"
cat >"$stage/DEBIAN/control" <<CONTROL
Package: spoold
Version: $version
Architecture: $arch
Maintainer: $maintainer
Section: net
Priority: optional
Depends: $shlibs, adduser, init-system-helpers (>= 1.54~)
Installed-Size: $(du -sk --exclude=DEBIAN "$stage" | cut -f1)
Homepage: https://github.com/spoold/spoold
Description: SNMP poller with a durable spool and batched RRD writes
 spoold polls network devices over SNMP, keeps every poll result durably
 in a spool directory, and writes the values into RRD files in batches,
 one update per file. It draws graphs on demand and serves its status and
 Prometheus metrics over HTTP. The unit is enabled on installation but not
 started: add targets to /etc/spoold/targets.conf, then
 systemctl start spoold.
CONTROL
printf '/etc/spoold/targets.conf\n/etc/spoold/profiles.conf\n' >"$stage/DEBIAN/conffiles"
install -m 0755 "$here"/deb/postinst "$here"/deb/prerm "$here"/deb/postrm "$stage/DEBIAN/"

mkdir -p "$out"
deb=$out/spoold_${version}_${arch}.deb
dpkg-deb --root-owner-group -Zxz --build "$stage" "$deb" >/dev/null
echo "$deb"
