# Sourced by the ensure-*.sh scripts: install a Debian package when its command is missing.
# Usage: install_missing PREFIX COMMAND PACKAGE   (PREFIX starts each message: the script's name)
install_missing() {
  local prefix="$1" command="$2" package="$3"
  if command -v "$command" >/dev/null 2>&1; then
    return 0
  fi
  if [ "$(id -u)" != "0" ]; then
    echo "$prefix: $package is missing and installing it needs root" >&2
    exit 1
  fi
  echo "$prefix: installing $package"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "$package" >/dev/null
}
