#!/usr/bin/env bash
# Makes sure this machine has a Vulkan driver that Dawn (npm `webgpu`) can open.
# With no GPU driver present, installs Mesa 25's lavapipe (a software Vulkan adapter) from
# bookworm-backports: Debian 12's own Mesa 22 is too old for Dawn. Safe to run again.
set -euo pipefail

has_vulkan_icd() { compgen -G "/usr/share/vulkan/icd.d/*.json" >/dev/null || compgen -G "/etc/vulkan/icd.d/*.json" >/dev/null; }
lavapipe_version() { dpkg-query -W -f='${Version}' mesa-vulkan-drivers 2>/dev/null || true; }

if has_vulkan_icd && [[ "$(lavapipe_version)" != 22.* ]]; then
  echo "setup-webgpu: a Vulkan driver is installed ($(lavapipe_version || echo vendor))"
  exit 0
fi
if ! command -v apt-get >/dev/null || [ "$(id -u)" != 0 ]; then
  echo "setup-webgpu: no usable Vulkan driver, and cannot install one (needs Debian and root)." >&2
  echo "  Install Mesa >= 24 (mesa-vulkan-drivers) or a GPU driver by hand." >&2
  exit 1
fi
. /etc/os-release
added_source=
if [ "${VERSION_CODENAME:-}" = bookworm ] && ! grep -rqs 'bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d/; then
  echo "deb http://deb.debian.org/debian bookworm-backports main" > /etc/apt/sources.list.d/bookworm-backports.list
  added_source=1
fi
export DEBIAN_FRONTEND=noninteractive
# One apt-get update for all of quickstart.sh's setup scripts (SYNCOPATE_APT_UPDATED), and one after a new source.
if [ -n "$added_source" ] || [ ! -s "${SYNCOPATE_APT_UPDATED:-}" ]; then
  apt-get update -qq
  if [ -n "${SYNCOPATE_APT_UPDATED:-}" ]; then echo updated >"$SYNCOPATE_APT_UPDATED"; fi
fi
if [ "${VERSION_CODENAME:-}" = bookworm ]; then
  apt-get install -y -qq -t bookworm-backports mesa-vulkan-drivers libvulkan1 >/dev/null
else
  apt-get install -y -qq mesa-vulkan-drivers libvulkan1 >/dev/null
fi
echo "setup-webgpu: installed mesa-vulkan-drivers $(lavapipe_version)"
