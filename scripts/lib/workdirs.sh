# Sourced by scripts that stage a large working directory (the base image's rootfs). Such a
# directory is held with a lock on it (`exec 9<"$dir"; flock 9`), which the kernel drops with
# the last process holding it, however it ends; what a killed run left is then removed by the
# next one. The shell side of jazzmine/sandbox/workdirs.py.

# Remove PREFIX* directories nobody holds that are over MINUTES old; print each one removed.
# Usage: workdirs_abandoned_remove PREFIX MINUTES
workdirs_abandoned_remove() {
  local prefix="$1" minutes="$2" dir mount held
  for dir in "$prefix"*; do
    # Only real directories of our own, never a link: /tmp is everyone's.
    [ -d "$dir" ] && [ ! -L "$dir" ] && [ -O "$dir" ] || continue
    [ -n "$(find "$dir" -maxdepth 0 -mmin "+$minutes" 2>/dev/null)" ] || continue
    # The age only covers the moment between its creation and its lock; the lock says whether
    # the script that made it (or something it started) still lives.
    exec {held}<"$dir" || continue
    if ! flock -n "$held"; then
      exec {held}<&-
      continue
    fi
    # A bootstrap killed mid-way leaves its chroot's /proc and /sys mounted: let them go first
    # (deepest first), then remove what is left without crossing into a mount still there.
    while read -r mount; do
      umount -l "$mount" 2>/dev/null || true
    done < <(awk -v p="$dir/" 'index($2, p) == 1 { print $2 }' /proc/mounts | sort -r)
    rm -rf --one-file-system "$dir" 2>/dev/null || true
    exec {held}<&-
    [ -e "$dir" ] || echo "$dir"
  done
}
