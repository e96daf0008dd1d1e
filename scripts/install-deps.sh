#!/usr/bin/env bash
# Installs the Debian packages spoold's build, tests and demo need, when missing.
# Idempotent: with everything present it only checks. Runs apt-get as root or via sudo.
set -euo pipefail

# dpkg-dev, groff-base and man-db: make deb and the tests of make install
# and of the package (packaging/, tested in internal/testing/packaging); prometheus: promtool checks /metrics;
# python3-pysnmp4(-mibs): pysnmp's copies of the IETF MIBs check mib;
# rrdcached: the peer the rrdcached client and forwarding are tested against;
# strace: the graph template test sees which files rrdtool opens;
# collectd-core: its rrdcached plugin writes through spoold's socket.
PKGS=(librrd-dev rrdtool pkg-config gcc snmpd snmp snmpsim python3-pysnmp4 python3-pysnmp4-mibs chromium dpkg-dev groff-base man-db prometheus rrdcached strace collectd-core lintian)

missing=()
for p in "${PKGS[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
	exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "install-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
