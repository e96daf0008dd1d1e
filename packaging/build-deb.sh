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

# A Debian version starts with a digit: a tag v1.2.3 gives 1.2.3, an
# untagged tree 0.0~git<hash> (sorting before any release).
version=$(git -C "$root" describe --tags --always --dirty 2>/dev/null || echo unknown)
version=${version#v}
version=${version//-/+}
case $version in [0-9]*) ;; *) version=0.0~git$version ;; esac
arch=$(dpkg-architecture -qDEB_HOST_ARCH)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
stage=$work/stage
make -s -C "$root" install BIN="$bin" DESTDIR="$stage" PREFIX=/usr SYSCONFDIR=/etc >/dev/null
gzip -9n "$stage/usr/share/man/man8/spoold.8"

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
Maintainer: spoold developers <spoold@localhost>
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
