#!/usr/bin/env bash
# Makes sure Debian's Chromium is installed for `pnpm test:browser` (examples/browser/e2e.mjs).
# Safe to run again. CHROMIUM=/path/to/chromium: use that browser, install nothing.
set -euo pipefail

if [ -n "${CHROMIUM:-}" ] && [ -x "${CHROMIUM}" ]; then
  echo "setup-chromium: using ${CHROMIUM}"
  exit 0
fi
if [ -x /usr/bin/chromium ]; then
  echo "setup-chromium: $(/usr/bin/chromium --version 2>/dev/null || echo chromium) is installed"
  exit 0
fi
if ! command -v apt-get >/dev/null || [ "$(id -u)" != 0 ]; then
  echo "setup-chromium: no /usr/bin/chromium, and cannot install it (needs Debian and root)." >&2
  echo "  Install Chromium by hand and set CHROMIUM=/path/to/chromium." >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends chromium >/dev/null
echo "setup-chromium: installed $(/usr/bin/chromium --version 2>/dev/null)"
