# Sourced by the bench scripts whose figures depend on the file system's
# mount options. The root file system of the machines these benchmarks run
# on is ext4 without a journal, mounted with online discard: every unlink
# waits for a TRIM, and each new inode is found past every inode freed in
# the last half minute. Neither is what a server's ext4 does.
#
# scratchfs_mount WORK SIZE DIR [mkfs.ext4 options]: run as root, makes a
# sparse SIZE ext4 image WORK/fs.img (mkfs.ext4's defaults, journal
# included, inode tables written at once, so no lazy-init thread writes
# during the run), loop-mounts it at DIR with noatime and without discard,
# and sets SCRATCH_FS to a description for the script's output; not root,
# or the mount failing, leaves DIR on the root file system and says so in
# SCRATCH_FS. SCRATCH_LOOP_FLAGS adds losetup options (--direct-io=on, so
# that pages dropped from the mount's page cache are read from the disk,
# not from the image's own cache). scratchfs_cleanup (the scripts' EXIT
# trap calls it) unmounts and detaches it again.
SCRATCH_DIR=""
SCRATCH_LOOP=""
SCRATCH_FS=""

scratchfs_mount() {
	local work=$1 size=$2 dir=$3
	shift 3
	mkdir -p "$dir"
	SCRATCH_FS="root file system ($(findmnt -no FSTYPE,OPTIONS -T "$dir"))"
	[ "$(id -u)" = 0 ] || return 0
	truncate -s "$size" "$work/fs.img" &&
		mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0,nodiscard "$@" "$work/fs.img" &&
		SCRATCH_LOOP=$(losetup -f --show ${SCRATCH_LOOP_FLAGS:-} "$work/fs.img") &&
		mount -o noatime,nodiscard "$SCRATCH_LOOP" "$dir" || return 0
	SCRATCH_DIR=$dir
	SCRATCH_FS="ext4 on $SCRATCH_LOOP ($(findmnt -no OPTIONS "$dir")), a $size sparse image, no discard; root fs: $(findmnt -no FSTYPE,OPTIONS /)"
}

scratchfs_cleanup() {
	if [ -n "$SCRATCH_DIR" ] && mountpoint -q "$SCRATCH_DIR" 2>/dev/null; then
		umount "$SCRATCH_DIR" || umount -l "$SCRATCH_DIR" || true
	fi
	if [ -n "$SCRATCH_LOOP" ]; then losetup -d "$SCRATCH_LOOP" || true; fi
	SCRATCH_DIR="" SCRATCH_LOOP=""
}
